#include "core/engine/sweep.hpp"

#include "core/base/sha256.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>

namespace ts {

namespace {

std::string trim(const std::string& t) {
  size_t b = 0, e = t.size();
  while (b < e && std::isspace(static_cast<unsigned char>(t[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(t[e - 1]))) --e;
  return t.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<int64_t> parse_sizes(const std::string& text) {
  if (trim(text).empty())
    throw ValidationError("sizes are empty; give N, FROM:TO:STEP or FROM:TO:xF (e.g. 256:8192:256)");
  std::vector<int64_t> sizes;
  int64_t count = 0;
  auto add_count = [&](int64_t n, const std::string& item) {
    count += n;
    if (count > kMaxSweepSizes)
      throw ValidationError("sizes '" + text + "': '" + item + "' brings the sweep to " +
                            std::to_string(count) + " sizes, more than the limit of " +
                            std::to_string(kMaxSweepSizes) + " (use a larger step)");
  };
  for (const std::string& raw : split(text, ',')) {
    const std::string item = trim(raw);
    try {
      if (item.empty()) throw ValidationError("an empty entry");
      const std::vector<std::string> parts = split(item, ':');
      if (parts.size() == 1) {
        add_count(1, item);
        sizes.push_back(parse_dim(item, "size"));
        continue;
      }
      if (parts.size() != 3)
        throw ValidationError("a range is FROM:TO:STEP or FROM:TO:xF (three parts), not " +
                              std::to_string(parts.size()) + " parts");
      const int64_t from = parse_dim(parts[0], "FROM"), to = parse_dim(parts[1], "TO");
      if (from > to)
        throw ValidationError("FROM (" + std::to_string(from) + ") is greater than TO (" +
                              std::to_string(to) + ")");
      const std::string step = trim(parts[2]);
      if (!step.empty() && (step[0] == 'x' || step[0] == 'X')) {
        const int64_t f = parse_dim(step.substr(1), "factor");
        if (f < 2) throw ValidationError("factor x" + std::to_string(f) + " must be at least x2");
        if (f > 1024) throw ValidationError("factor x" + std::to_string(f) + " is above x1024");
        int64_t n = 0;
        for (int64_t v = from; v <= to; v *= f) ++n;
        add_count(n, item);
        for (int64_t v = from; v <= to; v *= f) sizes.push_back(v);
      } else {
        const int64_t st = parse_dim(step, "STEP");
        add_count((to - from) / st + 1, item);
        for (int64_t v = from; v <= to; v += st) sizes.push_back(v);
      }
    } catch (const ValidationError& e) {
      const std::string what = e.what();
      if (what.rfind("sizes '", 0) == 0) throw;
      throw ValidationError("sizes '" + text + "': " + (item.empty() ? "" : "'" + item + "': ") + what);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

const char* to_string(SweepShape s) {
  switch (s) {
    case SweepShape::Square:
      return "square";
    case SweepShape::FixedM:
      return "fixed-m";
    case SweepShape::FixedK:
      return "fixed-k";
  }
  return "?";
}

std::string KernelTile::label() const {
  return tile ? kernel + " T=" + std::to_string(tile) : kernel;
}

ProblemSpec SweepSpec::problem(int64_t s, const KernelTile& c) const {
  ProblemSpec p;
  p.kernel = c.kernel;
  p.tile = c.tile;
  p.input = input;
  p.seed = seed;
  p.m = p.n = p.k = s;
  if (shape == SweepShape::FixedM) p.m = fixed;
  if (shape == SweepShape::FixedK) p.k = fixed;
  return p;
}

std::vector<int64_t> SweepSpec::all_sizes() const {
  std::vector<int64_t> all = sizes;
  if (ragged > 0)
    for (int64_t s : sizes)
      if (s + ragged <= kMaxDim) all.push_back(s + ragged);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

int64_t SweepSpec::size_of(const ProblemSpec& p) const {
  return p.n;  // N follows the swept size in every shape
}

std::string SweepSpec::axis_label() const {
  switch (shape) {
    case SweepShape::Square:
      return "M = N = K";
    case SweepShape::FixedM:
      return "N = K (M = " + std::to_string(fixed) + ")";
    case SweepShape::FixedK:
      return "M = N (K = " + std::to_string(fixed) + ")";
  }
  return "N";
}

std::string SweepSpec::describe() const {
  std::ostringstream os;
  const std::vector<int64_t> all = all_sizes();
  os << axis_label() << " = ";
  if (all.empty())
    os << "(none)";
  else
    os << all.front() << ".." << all.back();
  os << " (" << all.size() << " sizes" << (ragged > 0 ? ", each also + " + std::to_string(ragged) : "")
     << "), " << configs.size() << " configuration" << (configs.size() == 1 ? "" : "s");
  return os.str();
}

std::vector<ProblemSpec> expand_sweep(const SweepSpec& spec) {
  if (spec.sizes.empty()) throw ValidationError("the sweep has no sizes");
  if (spec.configs.empty()) throw ValidationError("the sweep has no kernels to measure");
  if (spec.shape != SweepShape::Square && (spec.fixed < 1 || spec.fixed > kMaxDim))
    throw ValidationError(std::string(spec.shape == SweepShape::FixedM ? "fixed M" : "fixed K") + " = " +
                          std::to_string(spec.fixed) + " is outside 1.." + std::to_string(kMaxDim));
  if (spec.ragged < 0 || spec.ragged > 1024)
    throw ValidationError("ragged offset " + std::to_string(spec.ragged) + " is outside 0..1024");
  for (int64_t s : spec.sizes)
    if (s < 1 || s > kMaxDim)
      throw ValidationError("size " + std::to_string(s) + " is outside 1.." + std::to_string(kMaxDim));
  const std::vector<int64_t> sizes = spec.all_sizes();
  const int64_t total = int64_t(sizes.size()) * int64_t(spec.configs.size());
  if (total > kMaxSweepPoints)
    throw ValidationError("the sweep has " + std::to_string(total) + " points (" +
                          std::to_string(sizes.size()) + " sizes x " + std::to_string(spec.configs.size()) +
                          " configurations), more than the limit of " + std::to_string(kMaxSweepPoints));
  std::vector<ProblemSpec> points;
  points.reserve(size_t(total));
  for (int64_t s : sizes)
    for (const auto& c : spec.configs) points.push_back(spec.problem(s, c));
  return points;
}

// [SECTION] Shards.
std::string Shard::text() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

Shard parse_shard(const std::string& text, const std::string& what) {
  const std::string shown = what + " '" + text + "'";
  const std::string usage =
      " (I/N: the I-th of N shards, 1 <= I <= N, e.g. 2/4; in a Slurm job array run with --array=1-N: "
      "\"$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT\")";
  const std::vector<std::string> parts = split(text, '/');
  if (parts.size() != 2 || trim(parts[0]).empty() || trim(parts[1]).empty())
    throw ValidationError(shown + " is not I/N" + usage);
  auto number = [&](const std::string& raw, const char* name) -> int64_t {
    const std::string t = trim(raw);
    if (!std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); }))
      throw ValidationError(shown + ": " + name + " = '" + t + "' is not a whole number" + usage);
    if (t.size() > 9)
      throw ValidationError(shown + ": " + name + " = " + t + " is above the limit of " +
                            std::to_string(kMaxShards) + " shards");
    return std::stoll(t);
  };
  const int64_t i = number(parts[0], "I"), n = number(parts[1], "N");
  if (n < 1) throw ValidationError(shown + ": N = 0 shards; N must be at least 1" + usage);
  if (n > kMaxShards)
    throw ValidationError(shown + ": N = " + std::to_string(n) + " is above the limit of " +
                          std::to_string(kMaxShards) + " shards (a sweep holds at most " +
                          std::to_string(kMaxSweepPoints) + " points)");
  if (i < 1)
    throw ValidationError(shown + ": shards are numbered from 1 to " + std::to_string(n) +
                          ", not from 0 (a job array numbered from 0: give \"$((SLURM_ARRAY_TASK_ID + 1))/" +
                          std::to_string(n) + "\", or number it --array=1-" + std::to_string(n) + ")");
  if (i > n)
    throw ValidationError(shown + ": shard " + std::to_string(i) + " is above the " + std::to_string(n) +
                          " shards (I is at most N)");
  return Shard{int(i), int(n)};
}

std::vector<size_t> shard_points(size_t total, const Shard& shard) {
  std::vector<size_t> out;
  if (shard.count < 1 || shard.index < 1 || shard.index > shard.count) return out;
  for (size_t p = size_t(shard.index - 1); p < total; p += size_t(shard.count)) out.push_back(p);
  return out;
}

std::string sweep_sha256(const std::vector<ProblemSpec>& points) {
  Sha256 h;
  h.field("tilescope-sweep-1");
  h.field(std::to_string(points.size()));
  for (const ProblemSpec& p : points) {
    h.field(p.kernel);
    h.field(std::to_string(p.tile));
    h.field(std::to_string(p.m));
    h.field(std::to_string(p.n));
    h.field(std::to_string(p.k));
    h.field(to_string(p.input));
    h.field(std::to_string(p.seed));
  }
  return h.hex();
}

std::string describe_configs(const std::vector<KernelTile>& configs) {
  std::string s;
  for (const KernelTile& c : configs) s += (s.empty() ? "" : ", ") + c.label();
  return s;
}

namespace {
std::string point_label(const ProblemSpec& p) {
  return KernelTile{p.kernel, p.tile}.label() + " " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
         std::to_string(p.k);
}
}  // namespace

namespace {
std::vector<RunRequest> sweep_requests(const Backend& backend, const std::vector<ProblemSpec>& points,
                                       const MeasurePolicy& policy, const RunRequest& base = {}) {
  validate_policy(policy);
  std::vector<RunRequest> reqs(points.size(), base);
  for (size_t i = 0; i < points.size(); ++i) {
    reqs[i].spec = points[i];
    reqs[i].policy = policy;
    try {
      backend.validate(reqs[i], points[i].tile != 0);
    } catch (const ValidationError& e) {
      throw ValidationError("sweep point " + std::to_string(i + 1) + " of " + std::to_string(points.size()) +
                            " (" + point_label(points[i]) + "): " + e.what());
    }
  }
  return reqs;
}
}  // namespace

void validate_sweep(const Backend& backend, const std::vector<ProblemSpec>& points,
                    const MeasurePolicy& policy) {
  sweep_requests(backend, points, policy);
}

namespace {
// Measures the points `next` hands out (indices into `reqs`), one after the other.
int measure_points(Backend& backend, const std::vector<RunRequest>& reqs,
                   const std::function<std::optional<size_t>()>& next, const CancelToken& cancel,
                   const SweepCallback& on_point, const std::function<void(size_t)>& on_start) {
  int done = 0;
  while (!cancel.cancelled()) {
    const std::optional<size_t> at = next();
    if (!at) break;
    const size_t i = *at;
    if (on_start) on_start(i);
    SweepPointResult pr;
    pr.index = i;
    pr.spec = reqs[i].spec;
    const double t0 = now_s();
    try {
      pr.result = backend.run(reqs[i], cancel);
    } catch (const Cancelled&) {
      break;  // the point in flight is dropped
    } catch (const ValidationError& e) {
      pr.error = e.what();
      pr.bad_input = true;
    } catch (const std::exception& e) {
      pr.error = e.what();
    }
    pr.wall_s = now_s() - t0;
    ++done;
    if (on_point) on_point(pr, done, int(reqs.size()));
  }
  return done;
}
}  // namespace

int run_sweep(Backend& backend, const std::vector<ProblemSpec>& points, const MeasurePolicy& policy,
              const CancelToken& cancel, const SweepCallback& on_point,
              const std::function<void(size_t)>& on_start, const RunRequest& base) {
  const std::vector<RunRequest> reqs = sweep_requests(backend, points, policy, base);
  size_t i = 0;
  return measure_points(
      backend, reqs,
      [&]() -> std::optional<size_t> { return i < reqs.size() ? std::optional(i++) : std::nullopt; }, cancel,
      on_point, on_start);
}

SharedPlan::SharedPlan(std::vector<ProblemSpec> points, int runners)
    : m_points(std::move(points)), m_runners(std::max(1, runners)) {}

std::optional<size_t> SharedPlan::take() {
  const size_t i = m_next.fetch_add(1);
  if (i < m_points.size()) return i;
  m_next.store(m_points.size());  // never runs past the end, however often it is asked
  return std::nullopt;
}

std::vector<ProblemSpec> SharedPlan::untaken() const {
  const size_t from = std::min(m_next.load(), m_points.size());
  return {m_points.begin() + std::ptrdiff_t(from), m_points.end()};
}

int run_shared_sweep(Backend& backend, SharedPlan& plan, const MeasurePolicy& policy,
                     const CancelToken& cancel, const SweepCallback& on_point,
                     const std::function<void(size_t)>& on_start, const RunRequest& base) {
  const std::vector<RunRequest> reqs = sweep_requests(backend, plan.points(), policy, base);
  return measure_points(
      backend, reqs, [&] { return plan.take(); }, cancel, on_point, on_start);
}

const char* to_string(SweepProgress::State s) {
  switch (s) {
    case SweepProgress::State::Idle:
      return "idle";
    case SweepProgress::State::Running:
      return "running";
    case SweepProgress::State::Done:
      return "done";
    case SweepProgress::State::Cancelled:
      return "cancelled";
    case SweepProgress::State::Refused:
      return "refused";
  }
  return "?";
}

std::string cancelled_note(int kept) {
  if (kept <= 0) return "cancelled before any point finished: nothing to keep";
  if (kept == 1) return "cancelled: the 1 point finished is kept";
  return "cancelled: the " + std::to_string(kept) + " points finished are kept";
}

double point_work(const ProblemSpec& p) {
  return double(p.m) * double(p.n) * double(p.k);
}

SweepTimeLeft estimate_time_left(const std::vector<ProblemSpec>& points,
                                 const std::vector<SweepPointTime>& finished, bool in_flight,
                                 double in_flight_s) {
  struct Rate {
    double seconds = 0, work = 0, quickest = 0;
    bool any = false;
    void add(double s, double w) {
      quickest = any ? std::min(quickest, s) : s;
      seconds += s;
      work += w;
      any = true;
    }
  };
  Rate all;
  std::map<std::pair<std::string, int>, Rate> by_config;  // kernel x tile
  auto config_of = [&](const ProblemSpec& p) -> Rate& { return by_config[{p.kernel, p.tile}]; };
  const size_t done = std::min(finished.size(), points.size());
  for (size_t i = 0; i < done; ++i)
    if (finished[i].measured && finished[i].seconds >= 0) {
      all.add(finished[i].seconds, point_work(points[i]));
      config_of(points[i]).add(finished[i].seconds, point_work(points[i]));
    }
  SweepTimeLeft left;
  if (!all.any) return left;
  // A configuration without a finished point is scaled like all the finished points.
  auto estimate = [&](const ProblemSpec& p) {
    const Rate& own = config_of(p);
    const Rate& r = own.any ? own : all;
    const double rate = r.work > 0 ? r.seconds / r.work : 0.0;
    return std::max(rate * point_work(p), r.quickest);
  };
  left.seconds = 0;
  size_t next = done;
  if (in_flight && next < points.size()) {
    const ProblemSpec& p = points[next];
    const double expected = estimate(p);
    if (in_flight_s < expected) {
      left.seconds += expected - in_flight_s;
    } else {
      // Slower than its configuration's rate: the ones after it will not be quicker per unit of work, nor
      // quicker than it (they are at least as large in a sweep).
      left.overdue = true;
      Rate& own = config_of(p);
      if (!own.any) own = all;
      const double w = point_work(p);
      if (w > 0 && own.work > 0 && in_flight_s / w > own.seconds / own.work) {
        own.seconds = in_flight_s;
        own.work = w;
      }
      own.quickest = std::max(own.quickest, in_flight_s);
    }
    ++next;
  }
  for (size_t i = next; i < points.size(); ++i) left.seconds += estimate(points[i]);
  return left;
}

std::string format_duration(double s) {
  char b[48];
  if (!(s >= 0)) s = 0;
  if (s < 60)
    std::snprintf(b, sizeof b, "%.0f s", s);
  else if (s < 3600)
    std::snprintf(b, sizeof b, "%d min %02d s", int(s) / 60, int(s) % 60);
  else
    std::snprintf(b, sizeof b, "%d h %02d min", int(s) / 3600, (int(s) / 60) % 60);
  return b;
}

std::string about_duration(double s) {
  return s >= 1 ? "about " + format_duration(s) : "less than a second";
}

SweepProgress combine_progress(const std::vector<SweepProgress>& runners) {
  SweepProgress out;
  if (runners.empty()) return out;
  bool all_refused = true, any_cancelled = false, all_idle = true;
  for (const SweepProgress& r : runners) {
    out.done += r.done;
    out.total += r.total;
    out.failed += r.failed;
    out.elapsed_s = std::max(out.elapsed_s, r.elapsed_s);
    if (!out.in_flight && r.in_flight) out.in_flight = r.in_flight;
    if (r.running()) {
      // Unknown while any running runner has measured nothing yet; else the slowest runner's.
      if (!out.running())
        out.remaining_s = r.remaining_s;
      else if (out.remaining_s >= 0)
        out.remaining_s = r.remaining_s < 0 ? -1 : std::max(out.remaining_s, r.remaining_s);
      out.state = SweepProgress::State::Running;
      out.overdue = out.overdue || r.overdue;
    }
    if (r.state != SweepProgress::State::Refused) all_refused = false;
    if (r.state == SweepProgress::State::Cancelled) any_cancelled = true;
    if (r.state != SweepProgress::State::Idle) all_idle = false;
    if (out.error.empty() && !r.error.empty()) out.error = r.error;
  }
  if (out.running()) return out;
  out.remaining_s = 0;
  if (all_idle)
    out.state = SweepProgress::State::Idle;
  else if (all_refused)
    out.state = SweepProgress::State::Refused;
  else if (any_cancelled)
    out.state = SweepProgress::State::Cancelled;
  else
    out.state = SweepProgress::State::Done;
  return out;
}

std::string describe_time_left(const SweepProgress& p) {
  if (!p.running()) return "";
  if (p.remaining_s < 0) return "time left after the first point";
  const bool last = p.done + 1 >= p.total;
  if (p.overdue && last) return "the last point is taking longer than expected";
  if (p.overdue)
    return about_duration(p.remaining_s) +
           " left after the point in flight, which is taking longer than expected";
  return about_duration(p.remaining_s) + " left";
}

SweepRunner::SweepRunner(std::shared_ptr<Backend> backend) : m_backend(std::move(backend)) {}

SweepRunner::~SweepRunner() {
  cancel();
  wait();
}

void SweepRunner::start(std::vector<ProblemSpec> points, MeasurePolicy policy, RunRequest base) {
  if (points.empty()) throw ValidationError("the sweep has no points");
  if (points.size() > size_t(kMaxSweepPoints))
    throw ValidationError("the sweep has " + std::to_string(points.size()) +
                          " points, more than the limit of " + std::to_string(kMaxSweepPoints));
  validate_policy(policy);
  std::lock_guard<std::mutex> lock(m_mu);
  if (m_progress.running()) throw ValidationError("a sweep is already running; cancel it first");
  if (m_thread.joinable()) m_thread.join();  // the previous sweep's thread has finished its work
  m_progress = SweepProgress{};
  m_progress.state = SweepProgress::State::Running;
  m_progress.total = int(points.size());
  m_points = points;
  m_shared.reset();
  m_times.clear();
  m_started = m_point_started = now_s();
  m_token = CancelToken();
  m_thread =
      std::thread([this, pts = std::move(points), policy, base = std::move(base), token = m_token]() mutable {
        loop(std::move(pts), std::move(policy), std::move(base), token);
      });
}

void SweepRunner::start(std::shared_ptr<SharedPlan> plan, MeasurePolicy policy, RunRequest base) {
  if (!plan || plan->points().empty()) throw ValidationError("the sweep has no points");
  if (plan->points().size() > size_t(kMaxSweepPoints))
    throw ValidationError("the sweep has " + std::to_string(plan->points().size()) +
                          " points, more than the limit of " + std::to_string(kMaxSweepPoints));
  validate_policy(policy);
  std::lock_guard<std::mutex> lock(m_mu);
  if (m_progress.running()) throw ValidationError("a sweep is already running; cancel it first");
  if (m_thread.joinable()) m_thread.join();
  m_progress = SweepProgress{};
  m_progress.state = SweepProgress::State::Running;
  m_progress.total = int((plan->points().size() + size_t(plan->runners()) - 1) / size_t(plan->runners()));
  m_points.clear();
  m_shared = plan;
  m_times.clear();
  m_started = m_point_started = now_s();
  m_token = CancelToken();
  m_thread =
      std::thread([this, plan = std::move(plan), policy, base = std::move(base), token = m_token]() mutable {
        shared_loop(std::move(plan), std::move(policy), std::move(base), token);
      });
}

void SweepRunner::shared_loop(std::shared_ptr<SharedPlan> plan, MeasurePolicy policy, RunRequest base,
                              CancelToken token) {
  std::string refused;
  try {
    run_shared_sweep(
        *m_backend, *plan, policy, token,
        [&](const SweepPointResult& p, int done, int) { point_finished(p, done); },
        [&](size_t i) { point_started(plan->points()[i], true); }, base);
  } catch (const std::exception& e) {  // a refusal before anything was measured
    refused = e.what();
  }
  finish(token.cancelled(), refused);
}

void SweepRunner::point_started(const ProblemSpec& p, bool taken) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (taken) m_points.push_back(p);  // a shared plan: the points this runner took, in order
  m_progress.in_flight = p;
  m_point_started = now_s();
}

void SweepRunner::point_finished(const SweepPointResult& p, int done) {
  std::lock_guard<std::mutex> lock(m_mu);
  m_progress.done = done;
  if (!p.result) ++m_progress.failed;
  m_progress.in_flight.reset();
  m_times.push_back({p.wall_s, p.result.has_value()});
  m_finished.push_back(p);
}

void SweepRunner::finish(bool cancelled, const std::string& refused) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (m_shared) m_progress.total = m_progress.done;  // what this runner took is its whole share
  SweepProgress::State end = SweepProgress::State::Done;
  if (!refused.empty())
    end = SweepProgress::State::Refused;
  else if (cancelled && (m_shared ? !m_shared->untaken().empty() || m_progress.in_flight.has_value()
                                  : m_progress.done < m_progress.total))
    end = SweepProgress::State::Cancelled;
  m_progress.state = end;
  m_progress.error = refused;
  m_progress.in_flight.reset();
  m_progress.elapsed_s = now_s() - m_started;
  m_progress.remaining_s = 0;
  m_progress.overdue = false;
}

void SweepRunner::loop(std::vector<ProblemSpec> points, MeasurePolicy policy, RunRequest base,
                       CancelToken token) {
  std::string refused;
  try {
    run_sweep(
        *m_backend, points, policy, token,
        [&](const SweepPointResult& p, int done, int) { point_finished(p, done); },
        [&](size_t i) { point_started(points[i], false); }, base);
  } catch (const std::exception& e) {  // a refusal before anything was measured
    refused = e.what();
  }
  finish(token.cancelled(), refused);
}

void SweepRunner::cancel() {
  std::lock_guard<std::mutex> lock(m_mu);
  m_token.cancel();
}

SweepProgress SweepRunner::progress() const {
  std::lock_guard<std::mutex> lock(m_mu);
  SweepProgress p = m_progress;
  if (p.running()) {
    const double now = now_s();
    p.elapsed_s = now - m_started;
    SweepTimeLeft left =
        estimate_time_left(m_points, m_times, p.in_flight.has_value(), now - m_point_started);
    if (m_shared) {
      // Its share of the points no runner has taken yet, at this runner's pace (the finished points first,
      // so the estimate reads their times, then the untaken ones).
      const std::vector<ProblemSpec> untaken = m_shared->untaken();
      std::vector<ProblemSpec> own(m_points.begin(), m_points.begin() + std::ptrdiff_t(m_times.size()));
      own.insert(own.end(), untaken.begin(), untaken.end());
      const SweepTimeLeft rest = estimate_time_left(own, m_times, false, 0);
      if (left.seconds >= 0 && rest.seconds >= 0) left.seconds += rest.seconds / m_shared->runners();
      p.total = p.done + (p.in_flight ? 1 : 0) +
                int((untaken.size() + size_t(m_shared->runners()) - 1) / size_t(m_shared->runners()));
    }
    p.remaining_s = left.seconds;
    p.overdue = left.overdue;
  }
  return p;
}

std::vector<SweepPointResult> SweepRunner::take_finished() {
  std::lock_guard<std::mutex> lock(m_mu);
  std::vector<SweepPointResult> out;
  out.swap(m_finished);
  return out;
}

bool SweepRunner::running() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_progress.running();
}

void SweepRunner::wait() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    t.swap(m_thread);
  }
  if (t.joinable()) t.join();
}

int64_t grid_blocks(int64_t m, int64_t n, int tile_m, int tile_n) {
  if (tile_m <= 0 || tile_n <= 0 || m <= 0 || n <= 0) return 0;
  return ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
}

std::vector<WaveMark> wave_marks(const SweepSpec& spec, int64_t from, int64_t to, int tile_m, int tile_n,
                                 int blocks_per_sm, int sm_count, int blocks_per_tile) {
  std::vector<WaveMark> marks;
  if (tile_m <= 0 || tile_n <= 0 || blocks_per_sm <= 0 || sm_count <= 0 || from > to || from < 1)
    return marks;
  const int64_t per_wave = int64_t(blocks_per_sm) * sm_count;
  int64_t prev = -1;
  for (int64_t s = from; s <= to; ++s) {
    const ProblemSpec p = spec.problem(s, {});
    const int64_t g = grid_blocks(p.m, p.n, tile_m, tile_n) * std::max(1, blocks_per_tile);
    const int64_t w = (g + per_wave - 1) / per_wave;
    if (prev >= 0 && w > prev) marks.push_back({s, w, g});
    prev = w;
  }
  return marks;
}

}  // namespace ts
