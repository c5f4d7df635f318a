#include "core/engine/engine.hpp"

#include <cstdio>

#include "core/engine/impossible.hpp"

namespace ts {

std::string unwritten_note(int64_t unwritten, int64_t elements) {
  if (unwritten <= 0) return "";
  if (unwritten == elements)
    return "C was left untouched: every element still holds the NaN it was filled with before the launch. "
           "Does "
           "the kernel write C, and is the right parameter mapped to C?";
  return std::to_string(unwritten) + " of " + std::to_string(elements) +
         " elements of C were never written (they still hold the NaN C was filled with before the launch)";
}

std::string changed_inputs_verdict(const ErrorStats& e, int set, int sets, int64_t unchanged,
                                   int64_t elements, bool own_passed) {
  if (e.passed) return "";
  char figures[160];
  std::snprintf(figures, sizeof figures,
                "max |C - ref| = %.3g against a tolerance of %.3g, %lld elements over it", e.max_abs_err,
                e.tolerance, (long long)e.bad_elements);
  const std::string where = "input set " + std::to_string(set) + " of " + std::to_string(sets);
  if (!own_passed) return "C is wrong on " + where + " as on the run's own inputs (" + figures + ")";
  if (unchanged == elements)
    return "C did not change when A and B did: the kernel returned an earlier answer (after launches on " +
           where + ", every element of C was still its answer for the run's own inputs; " + figures + ")";
  std::string text =
      "C is wrong on " + where + " (" + figures + "), though it passed on the run's own inputs";
  if (unchanged > 0)
    text += "; " + std::to_string(unchanged) + " of " + std::to_string(elements) +
            " elements of C were still its answer for the run's own inputs: part of an earlier answer kept";
  else
    text += ": does the kernel keep state between launches?";
  return text;
}

namespace {

// [SECTION] Changing inputs: the kernel timed again on input sets switched between samples, then C checked
// against the reference of the last sample's set (and of set 1 after one more launch, when the last sample's
// was the run's own set 0), so at least one set other than the run's own is always checked.
void check_changing_inputs(RunResult& r, const MeasurePolicy& policy, const RunFacts& facts,
                           RunMatrices& matrices, RunLauncher& launcher, const CancelToken& cancel) {
  const ProblemSpec& s = r.spec;
  const int sets = MeasurePolicy::kChangingInputSets;
  matrices.make_input_sets(sets);
  matrices.keep_c();
  const Measurement m = launcher.measure_changing(policy, sets, cancel);
  ChangingInputs& x = r.changing;
  x.sets = sets;
  x.samples_ms = m.samples_ms;
  x.stats = m.stats;
  x.stop = to_string(m.stop);
  std::vector<int> check{m.last_input_set};
  if (m.last_input_set == 0) check.push_back(1);
  std::string checked;
  for (int set : check) {
    cancel.throw_if_cancelled();
    if (set != m.last_input_set) launcher.launch_on(set, cancel);
    matrices.select_inputs(set, cancel);
    const Tolerance tol = tolerance_for(s.k, matrices.max_abs_a(), matrices.max_abs_b(), facts.tf32);
    const ErrorStats e = matrices.compare(tol);
    checked += (checked.empty() ? "" : " and ") + std::to_string(set);
    if (e.passed) continue;
    x.passed = false;
    x.verdict = changed_inputs_verdict(e, set, sets, matrices.c_unchanged(), s.m * s.n, r.error.passed);
    if (r.error.passed) {  // it passed on its own inputs: the changed ones decide
      r.error = e;
      r.note = x.verdict + ". The heatmaps show the run's own inputs, on which it passed" +
               (r.note.empty() ? "" : "; " + r.note);
    }
    break;
  }
  if (x.passed)
    x.verdict = "C matched the reference of input set" + std::string(check.size() > 1 ? "s " : " ") +
                checked + " of " + std::to_string(sets) + " (the last sample's" +
                (check.size() > 1 ? ", then one more launch's)" : ")");
  matrices.end_input_sets(cancel);
}

}  // namespace

RunResult run_pipeline(const RunRequest& req, const MeasurePolicy& policy, const RunFacts& facts,
                       RunMatrices& matrices, RunLauncher& launcher, const CancelToken& cancel) {
  const ProblemSpec& s = req.spec;
  // [SECTION] Inputs, the reference, and one launch into a poisoned C.
  matrices.make_inputs(req);
  cancel.throw_if_cancelled();
  matrices.make_reference(cancel);
  matrices.poison_c();
  launcher.verify_launch(cancel);
  cancel.throw_if_cancelled();

  // [SECTION] Verification.
  RunResult r;
  r.spec = s;
  r.backend = facts.backend;
  r.device = facts.device;
  r.reference = facts.reference;
  r.tf32 = facts.tf32;
  r.note = facts.note;
  const Tolerance tol = tolerance_for(s.k, matrices.max_abs_a(), matrices.max_abs_b(), facts.tf32);
  r.error = matrices.compare(tol);
  if (const std::string unwritten = unwritten_note(matrices.unwritten(), s.m * s.n); !unwritten.empty())
    r.note = unwritten + (r.note.empty() ? "" : "; " + r.note);
  if (req.keep_output) r.c = matrices.copy_c();

  // [SECTION] Timing under the policy, or why not.
  if (r.error.passed || policy.time_failed) {
    record_measurement(r, launcher.measure(policy, cancel), policy, facts.clock_mhz, facts.reference_kernel);
    launcher.after_timing(r, policy);
    if (policy.changing_inputs) check_changing_inputs(r, policy, facts, matrices, launcher, cancel);
  } else {
    r.policy = policy.describe();
    r.timed = false;
    r.stop = "not timed";
    r.date = utc_now();
  }
  r.peak_tflops = facts.peak_tflops;
  // A time faster than the device can go: flagged, with the reason (never plotted or chosen as a record).
  if (r.timed && r.stats.count > 0)
    r.impossible = impossible_reason(s, r.tf32, r.median_ms(), facts.device_info, 0,
                                     l2_credit(policy.cold_l2, r.launches_per_sample));
  launcher.describe_launch(r);

  // [SECTION] What the window keeps, and the profile.
  if (req.keep_store) r.store = matrices.keep_store();
  if (req.profile) launcher.profile(r, cancel);
  return r;
}

}  // namespace ts
