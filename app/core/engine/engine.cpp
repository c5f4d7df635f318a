#include "core/engine/engine.hpp"

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
  } else {
    r.policy = policy.describe();
    r.timed = false;
    r.stop = "not timed";
    r.date = utc_now();
  }
  r.peak_tflops = facts.peak_tflops;
  // A time faster than the device can go: flagged, with the reason (never plotted or chosen as a record).
  if (r.timed && r.stats.count > 0)
    r.impossible = impossible_reason(s, r.tf32, r.median_ms(), facts.device_info);
  launcher.describe_launch(r);

  // [SECTION] What the window keeps, and the profile.
  if (req.keep_store) r.store = matrices.keep_store();
  if (req.profile) launcher.profile(r, cancel);
  return r;
}

}  // namespace ts
