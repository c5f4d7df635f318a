#include "core/remote/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include <pthread.h>
#include <signal.h>

#include "core/base/compress.hpp"
#include "core/io/binary_fields.hpp"
#include "core/io/record_fields.hpp"
#include "tilescope/version.hpp"

namespace ts::remote {

const char* to_string(Type t) {
  static const char* const names[] = {
      "Hello",   "Error",     "Run",           "RunDone",    "Validate",        "Validated",
      "Cancel",  "Bandwidth", "BandwidthDone", "LaunchInfo", "LaunchInfoReply", "Reduce",
      "Reduced", "Element",   "ElementValue",  "CopyMatrix", "MatrixPart",      "ReleaseStore",
      "Ping",    "Pong",      "Publish",       "Published",  "Withdraw",        "Build",
      "Built",   "Sanitize",  "Sanitized",     "Sass",       "SassReply"};
  const auto i = size_t(t);
  return i >= 1 && i <= size_t(Type::Last) ? names[i - 1] : "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxQ = io::kMaxQuantity;
constexpr uint32_t kMaxTiles = 1024;  // a kernel's tile values (a person's: 1..1024)

// [SECTION] Field lists of the engine's types (the record's own come from record_fields.hpp).
template <class Io, class P>
void policy_fields(Io& io, P& p) {
  io.text("name", p.name, 64);
  io.integer("warmup_launches", p.warmup_launches, 0, 1 << 30);
  io.number("warmup_seconds", p.warmup_seconds, 0, 1e6, false);
  io.integer("min_samples", p.min_samples, 0, 1 << 30);
  io.number("min_seconds", p.min_seconds, 0, 1e6, false);
  io.number("max_noise", p.max_noise, 0, 1e6, false);
  io.number("max_seconds", p.max_seconds, 0, 1e9, false);
  io.integer("max_samples", p.max_samples, 0, 1 << 30);
  io.flag("cold_l2", p.cold_l2);
  io.number("min_sample_ms", p.min_sample_ms, 0, 1000, false);
  io.flag("time_failed", p.time_failed);
  io.flag("interleave_reference", p.interleave_reference);
  io.flag("changing_inputs", p.changing_inputs);
  if constexpr (Io::reading) {
    std::string why;
    try {
      validate_policy(p);
    } catch (const std::exception& e) {
      why = e.what();
    }
    io.check([&] { return why.empty(); }, [&] { return "a measuring policy out of range: " + why; });
  }
}

template <class Io, class K>
void kernel_fields(Io& io, K& k) {
  io.text("id", k.id, 4096);
  io.text("title", k.title, 4096);
  io.text("description", k.description, 1 << 16);
  io.list("tiles", k.tiles, kMaxTiles, [](auto& e, auto& t) { e.integer("tile", t, 0, 1 << 16); });
  io.list("tile_labels", k.tile_labels, kMaxTiles, [](auto& e, auto& t) { e.text("label", t, 4096); });
  io.list("geometry", k.geometry, kMaxTiles, [](auto& e, auto& g) {
    constexpr int kEdge = 1 << 16;
    e.integer("block_m", g.block_m, 0, kEdge);
    e.integer("block_n", g.block_n, 0, kEdge);
    e.integer("block_k", g.block_k, 0, kEdge);
    e.integer("stages", g.stages, 1, 64);
    e.integer("k_slices", g.k_slices, 1, kEdge);
    e.integer("warp_m", g.warp_m, 0, kEdge);
    e.integer("warp_n", g.warp_n, 0, kEdge);
    e.flag("warpgroup", g.warpgroup);
    e.integer("piece_m", g.piece_m, 0, kEdge);
    e.integer("piece_n", g.piece_n, 0, kEdge);
    e.integer("pieces_m", g.pieces_m, 1, kEdge);
    e.integer("pieces_n", g.pieces_n, 1, kEdge);
    e.integer("step_m", g.step_m, 0, kEdge);
    e.integer("step_n", g.step_n, 0, kEdge);
    int bug = int(g.bug);
    e.integer("bug", bug, 0, int(StagingBug::Mirror));
    if constexpr (std::remove_reference_t<decltype(e)>::reading) g.bug = StagingBug(bug);
  });
  io.integer("default_tile", k.default_tile, 0, 1 << 16);
  io.text("threads_per_block", k.threads_per_block, 4096);
  io.flag("is_reference", k.is_reference);
  io.flag("teaching", k.teaching);
  io.flag("tf32", k.tf32);
  io.flag("traceable", k.traceable);
  io.integer("min_sm", k.min_sm, 0, 1000);
  io.flag("has_cuda", k.has_cuda);
  if constexpr (Io::reading) {
    io.flag("has_cpu", k.cpu_elsewhere);
  } else {
    io.flag("has_cpu", k.has_cpu());
  }
  io.flag("cpu_blocks_c", k.cpu_blocks_c);
  io.flag("user", k.user);
  io.flag("square_only", k.square_only);
  io.text("source", k.source, 1 << 16);
  io.check([&] { return !k.id.empty(); }, [] { return "a kernel without a name"; });
}

template <class Io, class C>
void capacity_fields(Io& io, C& c) {
  io.number("max_work", c.max_work, 0, kInf, false);
  io.number("max_bytes", c.max_bytes, 0, kInf, false);
  io.text("what", c.what, 4096);
}

template <class Io, class W>
void workshop_fields(Io& io, W& w) {
  io.flag("present", w.present);
  io.flag("can_build", w.can_build);
  io.text("build_why", w.build_why, 1 << 16);
  io.text("compiler", w.compiler, 256);
  io.list("architectures", w.architectures, 256, [](auto& e, auto& a) { e.integer("arch", a, 10, 1000); });
  io.integer("device_arch", w.device_arch, 0, 1000);
  io.flag("can_sanitize", w.can_sanitize);
  io.text("sanitize_why", w.sanitize_why, 1 << 16);
}

template <class Io, class E>
void engine_fields(Io& io, E& e) {
  io.text("kind", e.kind, 64);
  io.text("device_name", e.device_name, 4096);
  io.text("version_info", e.version_info, 4096);
  io.integer("cuda_device", e.cuda_device, -1, 1 << 16);
  io.object("device", [&](auto& d) { io::device_fields(d, e.device); });
  io.object("capacity", [&](auto& c) { capacity_fields(c, e.capacity); });
  io.object("default_policy", [&](auto& p) { policy_fields(p, e.default_policy); });
  io.object("bench_policy", [&](auto& p) { policy_fields(p, e.bench_policy); });
  io.list("kernels", e.kernels, kMaxKernels, [](auto& each, auto& k) { kernel_fields(each, k); });
  io.object("workshop", [&](auto& w) { workshop_fields(w, e.workshop); });
  io.check([&] { return e.kind == "cuda" || e.kind == "cpu"; },
           [&] { return "an engine of kind '" + e.kind + "' (cuda or cpu)"; });
}

template <class Io, class R>
void request_fields(Io& io, R& r) {
  io.object("spec", [&](auto& s) { io::problem_fields(s, r.spec); });
  bool has_policy = r.policy.has_value();
  io.flag("has_policy", has_policy);
  if (has_policy) {
    if constexpr (Io::reading) r.policy.emplace();
    io.object("policy", [&](auto& p) { policy_fields(p, *r.policy); });
  }
  io.flag("keep_output", r.keep_output);
  io.flag("profile", r.profile);
  io.flag("keep_store", r.keep_store);
  io.flag("memcheck_new_builds", r.memcheck_new_builds);
}

template <class Io, class O>
void occupancy_fields(Io& io, O& o) {
  io.integer("threads_per_block", o.res.threads_per_block, 0, 1 << 20);
  io.integer("regs_per_thread", o.res.regs_per_thread, 0, 1 << 20);
  io.integer("static_smem", o.res.static_smem, 0, 1 << 30);
  io.integer("dynamic_smem", o.res.dynamic_smem, 0, 1 << 30);
  io.integer("by_threads", o.by_threads, 0, 1 << 20);
  io.integer("by_regs", o.by_regs, 0, 1 << 20);
  io.integer("by_smem", o.by_smem, 0, 1 << 20);
  io.integer("by_blocks", o.by_blocks, 0, 1 << 20);
  io.integer("blocks_per_sm", o.blocks_per_sm, 0, 1 << 20);
  io.text("limiter", o.limiter, 4096);
  io.number("occupancy", o.occupancy, 0, 1, false);
  io.integer("grid_blocks", o.grid_blocks, 0, INT64_MAX);
  io.number("waves", o.waves, 0, kMaxQ, false);
  io.integer("full_waves", o.full_waves, 0, INT64_MAX);
  io.number("tail_fill", o.tail_fill, 0, 1, false);
  io.integer("api_blocks_per_sm", o.api_blocks_per_sm, -1, 1 << 20);
  io.text("function", o.function, 4096);
  io.flag("k_segments", o.k_segments);  // protocol 7
}

template <class Io, class T>
void trace_fields(Io& io, T& t) {
  io.integer("grid_x", t.grid_x, 0, INT32_MAX);
  io.integer("grid_y", t.grid_y, 0, INT32_MAX);
  io.integer("grid_z", t.grid_z, 1, INT32_MAX);
  io.flag("z_splits_columns", t.z_splits_columns);
  io.integer("k_step", t.k_step, 0, 1 << 20);
  io.flag("k_segments", t.k_segments);  // protocol 4: stream-K (the records' k_first travel in their bytes)
  io.integer("k", t.k, 0, kMaxDim);
  io.integer("tile_m", t.tile_m, 0, 1 << 20);
  io.integer("tile_n", t.tile_n, 0, 1 << 20);
  io.integer("sm_count", t.sm_count, 0, 1 << 20);
  io.number("traced_ms", t.traced_ms, 0, io::kMaxTimeMs);
  io.number("plain_ms", t.plain_ms, 0, io::kMaxTimeMs);
  io.unsigned_integer("timer_resolution_ns", t.timer_resolution_ns);
  int64_t count = int64_t(t.records.size());
  io.integer("records", count, 0, int64_t(1) << 24);
  std::string packed;
  if constexpr (!Io::reading) packed = zstd_compress(t.records.data(), t.records.size() * sizeof(TileRecord));
  io.bytes("records_zstd", packed);
  if constexpr (Io::reading) {
    std::string why;
    try {
      if (zstd_content_size(packed) != count * int64_t(sizeof(TileRecord)))  // said before anything is made
        throw CompressError("the records do not hold what their count says");
      t.records.resize(size_t(count));
      zstd_decompress(packed, t.records.data(), size_t(count) * sizeof(TileRecord));
    } catch (const std::exception& e) {
      why = e.what();
    }
    io.check([&] { return why.empty(); }, [&] { return "the trace's records: " + why; });
  }
}

template <class Io, class R>
void result_fields(Io& io, R& r) {
  // The record, with the lists a session file uses.
  io.object("spec", [&](auto& s) { io::problem_fields(s, r.spec); });
  io.text("backend", r.backend, 64);
  io.text("device", r.device, 4096);
  io.flag("tf32", r.tf32);
  io.object("error", [&](auto& e) {
    e.number("max_abs_err", r.error.max_abs_err, 0, kInf);
    e.number("max_rel_err", r.error.max_rel_err, 0, kInf);
    e.number("tolerance", r.error.tolerance, 0, kInf);
    e.integer("worst_row", r.error.worst_row, -1, kMaxDim);
    e.integer("worst_col", r.error.worst_col, -1, kMaxDim);
    e.integer("bad_elements", r.error.bad_elements, 0, INT64_MAX);
    e.flag("passed", r.error.passed);
  });
  io.text("policy", r.policy, 4096);
  io.flag("timed", r.timed);
  io::sampled_fields(io, r.samples_ms, r.stats);
  io.integer("launches_per_sample", r.launches_per_sample, 1, 1 << 20);
  io.text("stop", r.stop, 256);
  io.object("clock", [&](auto& c) { io::clock_fields(c, r.clock); });
  io.integer("frames_drawn", r.frames_drawn, 0, INT64_MAX);
  io.integer("tile_m", r.tile_m, 0, 1 << 20);
  io.integer("tile_n", r.tile_n, 0, 1 << 20);
  io.integer("blocks_per_tile", r.blocks_per_tile, 1, 1 << 20);
  io.number("reference_ms", r.reference_ms, 0, io::kMaxTimeMs);
  io.object("interleaved", [&](auto& o) { io::interleaved_fields(o, r.interleaved, r.interleaved_note); });
  io.text("impossible", r.impossible, 1 << 16);
  io.object("changing_inputs", [&](auto& o) { io::changing_fields(o, r.changing); });
  io.text("date", r.date, 256);
  // What RunResult adds.
  io.text("reference", r.reference, 4096);
  io.integer("warmups", r.warmups, 0, INT32_MAX);
  io.number("peak_tflops", r.peak_tflops, 0, kMaxQ);
  bool has_occupancy = r.occupancy.has_value();
  io.flag("has_occupancy", has_occupancy);
  if (has_occupancy) {
    if constexpr (Io::reading) r.occupancy.emplace();
    io.object("occupancy", [&](auto& o) { occupancy_fields(o, *r.occupancy); });
  }
  io.list("occupancy_by_tile", r.occupancy_by_tile, 64, [](auto& e, auto& p) {
    e.integer("tile", p.first, 0, 1 << 16);
    occupancy_fields(e, p.second);
  });
  bool has_trace = r.trace != nullptr;
  io.flag("has_trace", has_trace);
  if (has_trace) {
    if constexpr (Io::reading) {
      auto t = std::make_shared<TileTrace>();
      io.object("trace", [&](auto& o) { trace_fields(o, *t); });
      r.trace = t;
    } else {
      io.object("trace", [&](auto& o) { trace_fields(o, *r.trace); });
    }
  }
  io.text("trace_note", r.trace_note, 1 << 16);
  io.text("note", r.note, 1 << 16);
}

// [SECTION] A person's kernel and its builds (the limits of reading the file and of the compiler's
// messages: kernel_source.hpp, include_resolver.hpp, worker_protocol.hpp's CompileMsg).
constexpr size_t kMaxText = 4096;  // a name, a path, a formula

template <class Io, class S>
void source_fields(Io& io, S& s) {
  io.text("path", s.path, kMaxText);
  io.text("label", s.label, kMaxText);
  io.text("text", s.text, size_t(kMaxKernelSourceBytes));
  io.flag("from_python", s.from_python);
  io.flag("normalised", s.normalised);
  io.integer("first_line", s.first_line, 1, INT32_MAX);
}

template <class Io, class S>
void spec_fields(Io& io, S& s) {
  io.text("kernel", s.kernel, kMaxKernelName);
  io.list("params", s.params, 4096, [](auto& e, auto& b) {
    e.enumeration("role", b.role, ParamRole::A, ParamRole::Unmapped);
    e.text("value", b.value, kMaxText);
    e.text("why", b.why, 1 << 16);
  });
  io.text("tile_symbol", s.tile_symbol, kMaxText);
  io.list("tiles", s.tiles, kMaxTiles, [](auto& e, auto& t) { e.integer("tile", t, 0, 1 << 16); });
  io.integer("default_tile", s.default_tile, 0, 1 << 16);
  for (auto& g : s.grid) io.text("grid", g, kMaxText);
  for (auto& b : s.block) io.text("block", b, kMaxText);
  io.text("smem", s.smem, kMaxText);
  io.flag("x_covers_rows", s.x_covers_rows);
  io.flag("tf32", s.tf32);
  io.number("hang_limit_s", s.hang_limit_s, 0, 1e6, false);
  io.number("compile_limit_s", s.compile_limit_s, 0, 1e6, false);
  io.list("size_symbols", s.size_symbols, 4096, [](auto& e, auto& p) {
    e.text("symbol", p.first, kMaxText);
    e.text("dim", p.second, 16);
  });
}

template <class Io, class K>
void kernel_text_fields(Io& io, K& k) {
  io.object("source", [&](auto& s) { source_fields(s, k.source); });
  io.text("kernel", k.kernel, kMaxKernelName);
  io.object("spec", [&](auto& s) { spec_fields(s, k.spec); });
  io.list("headers", k.headers, uint32_t(kMaxIncludedFiles), [](auto& e, auto& h) {
    e.text("name", h.name, kMaxText);
    e.text("path", h.path, kMaxText);
    e.text("content", h.content, size_t(kMaxKernelSourceBytes));
  });
  int64_t bytes = 0;
  for (const auto& h : k.headers) bytes += int64_t(h.content.size());
  io.check([&] { return bytes <= kMaxIncludedBytes; },
           [&] { return "headers of " + std::to_string(bytes) + " bytes in all, over the limit"; });
}

template <class Io, class V>
void sizes_fields(Io& io, V& v) {
  io.integer("m", v.m, 0, kMaxDim);
  io.integer("n", v.n, 0, kMaxDim);
  io.integer("k", v.k, 0, kMaxDim);
  io.integer("tile", v.tile, 0, 1 << 16);
}

template <class Io, class M>
void module_fields(Io& io, M& m) {
  io.flag("ok", m.ok);
  io.bytes("log", m.log);
  io.list("diagnostics", m.diagnostics, 1 << 16, [](auto& e, auto& d) {
    e.integer("line", d.line, 0, INT32_MAX);
    e.text("severity", d.severity, 256);
    e.text("message", d.message, 1 << 16);
    e.text("context", d.context, 1 << 16);
  });
  io.bytes("cubin", m.cubin);
  io.bytes("ptx", m.ptx);
  io.text("lowered_name", m.lowered_name, 1 << 16);
  io.object("resources", [&](auto& r) {
    r.flag("found", m.resources.found);
    r.integer("regs", m.resources.regs, 0, INT32_MAX);
    r.integer("static_smem", m.resources.static_smem, 0, INT32_MAX);
    r.integer("stack_bytes", m.resources.stack_bytes, 0, INT32_MAX);
    r.integer("spill_stores", m.resources.spill_stores, 0, INT32_MAX);
    r.integer("spill_loads", m.resources.spill_loads, 0, INT32_MAX);
    r.integer("barriers", m.resources.barriers, 0, INT32_MAX);
    r.integer("cmem0", m.resources.cmem0, 0, INT32_MAX);
  });
  io.integer("arch", m.arch, 0, 1000);
  io.number("compile_s", m.compile_s, 0, 86400, false);
  io.flag("from_cache", m.from_cache);
  io.text("key", m.key, 256);
  io.list("options", m.options, 4096, [](auto& e, auto& o) { e.text("option", o, 1 << 16); });
  io.text("compiler_failure", m.compiler_failure, 1 << 16);
}

template <class Io, class R>
void report_fields(Io& io, R& r) {
  io.text("tool", r.tool, 64);
  io.flag("ran", r.ran);
  io.integer("issues", r.issues, -1, INT32_MAX);
  io.text("summary", r.summary, 1 << 16);
  io.text("output", r.output, 4 << 20);
  io.number("seconds", r.seconds, 0, 1e6, false);
  io.text("problem", r.problem, 1 << 16);
  io.object("shape", [&](auto& s) { io::problem_fields(s, r.shape); });
}

template <class Io, class R>
void region_fields(Io& io, R& r) {
  io.integer("row0", r.row0, 0, kMaxDim);
  io.integer("col0", r.col0, 0, kMaxDim);
  io.integer("rows", r.rows, 1, kMaxDim);
  io.integer("cols", r.cols, 1, kMaxDim);
  io.integer("w", r.w, 1, 1 << 15);
  io.integer("h", r.h, 1, 1 << 15);
}

template <class Io>
void matrix_id(Io& io, const char* key, MatrixId& id) {
  io.enumeration(key, id, MatrixId::A, MatrixId::Error);
}
template <class Io>
void matrix_id(Io& io, const char* key, const MatrixId& id) {
  io.enumeration(key, id, MatrixId::A, MatrixId::Error);
}

// [SECTION] Each message's list.
template <class M>
struct Fields;

template <>
struct Fields<HelloMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    // Never changes between versions: the protocol and the TileScope version come first.
    io.integer("protocol", m.protocol, 0, UINT32_MAX);
    io.text("tilescope", m.tilescope, 256);
    if constexpr (Io::reading)
      if (m.protocol != kProtocol)
        throw IncompatiblePeer("the other side speaks TileScope engine protocol " +
                               std::to_string(m.protocol) + " (TileScope " + m.tilescope +
                               "); this one speaks protocol " + std::to_string(kProtocol) + " (TileScope " +
                               ::ts::kVersion + ")");
    io.text("commit", m.commit, 256);
    io.text("role", m.role, 64);
    io.list("capabilities", m.capabilities, 256, [](auto& e, auto& c) { e.text("capability", c, 256); });
    io.flag("has_engine", m.has_engine);
    if (m.has_engine) io.object("engine", [&](auto& e) { engine_fields(e, m.engine); });
    io.check([&] { return m.role == "engine" || m.role == "window"; },
             [&] { return "a peer in the role '" + m.role + "'"; });
    io.check([&] { return m.role != "engine" || m.has_engine; },
             [] { return "an engine that says nothing of itself"; });
  }
};

template <>
struct Fields<ErrorMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.enumeration("kind", m.kind, ErrorKind::Validation, ErrorKind::UnknownStore);
    io.text("message", m.message, 1 << 16);
  }
};

template <>
struct Fields<RunMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("request", [&](auto& r) { request_fields(r, m.request); });
    io.flag("given_inputs", m.given_inputs);
  }
};

template <>
struct Fields<RunDoneMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("result", [&](auto& r) { result_fields(r, m.result); });
    io.flag("has_c", m.has_c);
    io.unsigned_integer("store", m.store.id);
    for (auto& d : m.store.dims) {
      io.integer("rows", d[0], 0, kMaxDim);
      io.integer("cols", d[1], 0, kMaxDim);
    }
  }
};

template <>
struct Fields<ValidateMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("request", [&](auto& r) { request_fields(r, m.request); });
    io.flag("tile_given", m.tile_given);
    io.flag("given_inputs", m.given_inputs);
    io.integer("a_rows", m.a_rows, 0, kMaxDim);
    io.integer("a_cols", m.a_cols, 0, kMaxDim);
    io.integer("b_rows", m.b_rows, 0, kMaxDim);
    io.integer("b_cols", m.b_cols, 0, kMaxDim);
  }
};

template <>
struct Fields<ValidatedMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("spec", [&](auto& s) { io::problem_fields(s, m.spec); });
  }
};

template <>
struct Fields<BandwidthDoneMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.number("gbs", m.result.gbs, 0, kMaxQ);
    io.number("best_gbs", m.result.best_gbs, 0, kMaxQ);
    io.integer("bytes", m.result.bytes, 0, INT64_MAX);
    io.object("ms", [&](auto& s) { io::stats_fields(s, m.result.ms); });
    io.text("method", m.result.method, 4096);
  }
};

template <>
struct Fields<LaunchInfoMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("spec", [&](auto& s) { io::problem_fields(s, m.spec); });
  }
};

template <>
struct Fields<LaunchInfoReplyMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.flag("has", m.has);
    io.integer("tile_m", m.info.tile_m, 0, 1 << 20);
    io.integer("tile_n", m.info.tile_n, 0, 1 << 20);
    io.integer("grid_blocks", m.info.grid_blocks, 0, INT64_MAX);
    io.integer("blocks_per_tile", m.info.blocks_per_tile, 1, 1 << 20);
    io.flag("k_segments", m.info.k_segments);
    io.object("occupancy", [&](auto& o) { occupancy_fields(o, m.info.occupancy); });
  }
};

template <>
struct Fields<ReduceMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.unsigned_integer("store", m.store);
    matrix_id(io, "matrix", m.matrix);
    io.object("region", [&](auto& r) { region_fields(r, m.region); });
    io.enumeration("mode", m.mode, Reduce::Mean, Reduce::AbsMax);
  }
};

template <>
struct Fields<ReducedMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    double lo = m.range.lo, hi = m.range.hi;
    io.number("lo", lo, -kInf, kInf);
    io.number("hi", hi, -kInf, kInf);
    io.integer("w", m.w, 1, 1 << 15);
    io.integer("h", m.h, 1, 1 << 15);
    io.bytes("values", m.values);
    if constexpr (Io::reading) m.range = ValueRange{float(lo), float(hi)};
  }
};

template <>
struct Fields<ElementMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.unsigned_integer("store", m.store);
    matrix_id(io, "matrix", m.matrix);
    io.integer("row", m.row, 0, kMaxDim);
    io.integer("col", m.col, 0, kMaxDim);
  }
};

template <>
struct Fields<ElementValueMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    std::string bits(sizeof(float), '\0');
    if constexpr (!Io::reading) std::memcpy(bits.data(), &m.value, sizeof(float));
    io.bytes("value", bits, sizeof(float));
    io.check([&] { return bits.size() == sizeof(float); }, [] { return "a value that is not 4 bytes"; });
    if constexpr (Io::reading) std::memcpy(&m.value, bits.data(), sizeof(float));
  }
};

template <>
struct Fields<CopyMatrixMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.unsigned_integer("store", m.store);
    matrix_id(io, "matrix", m.matrix);
  }
};

template <>
struct Fields<MatrixPartMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    matrix_id(io, "which", m.which);
    io.integer("rows", m.rows, 1, kMaxDim);
    io.integer("cols", m.cols, 1, kMaxDim);
    io.integer("offset", m.offset, 0, INT64_MAX);
    io.integer("count", m.count, 1, kPartElements);
    io.bytes("values", m.values);
    io.check([&] { return m.offset <= m.rows * m.cols - m.count; },
             [] { return "a matrix part past the matrix's end"; });
  }
};

template <>
struct Fields<ReleaseStoreMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.unsigned_integer("store", m.store);
  }
};

template <>
struct Fields<PingMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.number("sent", m.sent, -kInf, kInf, false);
  }
};

template <>
struct Fields<PongMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.number("sent", m.sent, -kInf, kInf, false);
    io.unsigned_integer("incidents", m.incidents);
    io.text("latest_incident", m.latest_incident, 1 << 16);
  }
};

template <>
struct Fields<PublishMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("kernel", [&](auto& k) { kernel_text_fields(k, m.kernel); });
  }
};

template <>
struct Fields<PublishedMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("info", [&](auto& k) { kernel_fields(k, m.info); });
  }
};

template <>
struct Fields<WithdrawMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.text("id", m.id, kMaxKernelName + 16);
  }
};

template <>
struct Fields<BuildMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("kernel", [&](auto& k) { kernel_text_fields(k, m.kernel); });
    io.integer("tile", m.tile, 0, 1 << 16);
    io.integer("arch", m.arch, 10, 1000);
    io.object("sizes", [&](auto& v) { sizes_fields(v, m.sizes); });
  }
};

template <>
struct Fields<BuiltMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("module", [&](auto& x) { module_fields(x, m.module); });
    io.flag("failed", m.failed);
    io.bytes("error", m.error);
    io.integer("first_line", m.first_line, 1, INT32_MAX);
    io.check([&] { return !m.failed || !m.module.ok; }, [] { return "a failed build of a module said ok"; });
  }
};

template <>
struct Fields<SanitizeMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.object("kernel", [&](auto& k) { kernel_text_fields(k, m.kernel); });
    io.object("spec", [&](auto& s) { io::problem_fields(s, m.spec); });
    io.list("tools", m.tools, 16, [](auto& e, auto& t) { e.text("tool", t, 64); });
    io.number("timeout_s", m.timeout_s, 0, 86400, false);
  }
};

template <>
struct Fields<SanitizedMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.list("reports", m.reports, 16, [](auto& e, auto& r) { report_fields(e, r); });
  }
};

template <>
struct Fields<SassMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    io.text("kernel", m.kernel, 4096);
    io.integer("tile", m.tile, 0, 1 << 20);
    io.integer("arch", m.arch, 0, 1000);
  }
};

template <>
struct Fields<SassReplyMsg> {
  template <class Io, class M>
  static void walk(Io& io, M& m) {
    auto& l = m.listing;
    io.flag("available", l.available);
    io.text("why", l.why, 1 << 16);
    io.text("kernel", l.kernel, 4096);
    io.integer("tile", l.tile, 0, 1 << 20);
    io.text("function", l.function, 1 << 16);
    io.integer("arch", l.arch, 0, 1000);
    io.text("text", l.text, kMaxSassText);
    io.text("tool", l.tool, 256);
    io.flag("build_time", l.build_time);
    io.text("made", l.made, 64);
    io.text("engine", l.engine, 4096);
    io.integer("regs", l.regs, -1, 1 << 16);
    io.integer("static_smem", l.static_smem, -1, 1 << 30);
    io.integer("spill_bytes", l.spill_bytes, -1, 1 << 30);
    io.integer("stack_bytes", l.stack_bytes, -1, 1 << 30);
    io.integer("threads", l.threads, 0, 1 << 20);
    io.integer("tile_m", l.tile_m, 0, 1 << 20);
    io.integer("tile_n", l.tile_n, 0, 1 << 20);
    io.text("note", l.note, 1 << 16);
  }
};

}  // namespace

KernelText kernel_text(const UserKernel& k) {
  return KernelText{k.source(), k.decl().name, k.spec(), k.headers()};
}

template <class M>
Frame encode(const M& m, uint64_t id) {
  wire::Writer w;
  io::BinaryWriter bw(w);
  Fields<M>::walk(bw, m);
  Frame f;
  f.type = M::kType;
  f.id = id;
  f.payload = w.take();
  if (f.payload.size() > kMaxPayload)
    throw ProtocolError(std::string("a ") + to_string(f.type) + " message of " +
                        std::to_string(f.payload.size()) + " bytes is over the limit of " +
                        std::to_string(kMaxPayload));
  return f;
}

template <class M>
M decode(const Frame& f) {
  if (f.type != M::kType)
    throw ProtocolError(std::string("expected a ") + to_string(M::kType) + " message, got " +
                        to_string(f.type));
  wire::Reader r(f.payload);
  io::BinaryReader br(r, to_string(M::kType));
  M m;
  Fields<M>::walk(br, m);
  r.done();
  return m;
}

template <class... M>
struct Codecs {
  std::tuple<Frame (*)(const M&, uint64_t)...> encoders;
  std::tuple<M (*)(const Frame&)...> decoders;
};
template <class... M>
Codecs<M...> codecs() {
  return {{&encode<M>...}, {&decode<M>...}};
}
template Codecs<HelloMsg, ErrorMsg, RunMsg, RunDoneMsg, ValidateMsg, ValidatedMsg, BandwidthDoneMsg,
                LaunchInfoMsg, LaunchInfoReplyMsg, ReduceMsg, ReducedMsg, ElementMsg, ElementValueMsg,
                CopyMatrixMsg, MatrixPartMsg, ReleaseStoreMsg, PingMsg, PongMsg, PublishMsg, PublishedMsg,
                WithdrawMsg, BuildMsg, BuiltMsg, SanitizeMsg, SanitizedMsg, SassMsg, SassReplyMsg>
codecs();

Frame empty(Type t, uint64_t id) {
  Frame f;
  f.type = t;
  f.id = id;
  return f;
}

// [SECTION] Matrices and values.
std::string pack_floats(const float* v, size_t n) {
  return zstd_compress(v, n * sizeof(float));
}

void unpack_floats(const std::string& packed, float* out, size_t n) {
  try {
    zstd_decompress(packed, out, n * sizeof(float));
  } catch (const CompressError& e) {
    throw ProtocolError(std::string("values: ") + e.what());
  }
}

std::vector<Frame> matrix_parts(const HostMatrix& m, MatrixId which, uint64_t id) {
  std::vector<Frame> out;
  const int64_t total = m.rows * m.cols;
  for (int64_t at = 0; at < total; at += kPartElements) {
    MatrixPartMsg p;
    p.which = which;
    p.rows = m.rows;
    p.cols = m.cols;
    p.offset = at;
    p.count = std::min(kPartElements, total - at);
    p.values = pack_floats(m.data.data() + at, size_t(p.count));
    out.push_back(encode(p, id));
  }
  return out;
}

bool MatrixAssembler::add(const MatrixPartMsg& p) {
  if (!m_m) {
    if (p.offset != 0) throw ProtocolError("a matrix whose first part does not start at its first element");
    if (p.rows * p.cols > kMaxMatrixElements)
      throw ProtocolError("a matrix of " + std::to_string(p.rows) + " x " + std::to_string(p.cols) +
                          " is over the limit of " + std::to_string(kMaxMatrixElements) + " elements");
    m_m = std::make_shared<HostMatrix>();
    m_m->rows = p.rows;
    m_m->cols = p.cols;
    m_m->data.resize(size_t(p.rows) * size_t(p.cols));
  }
  if (p.rows != m_m->rows || p.cols != m_m->cols || p.offset != m_next)
    throw ProtocolError("a matrix part that does not continue its matrix");
  unpack_floats(p.values, m_m->data.data() + p.offset, size_t(p.count));
  m_next += p.count;
  return complete();
}

std::shared_ptr<HostMatrix> MatrixAssembler::take() {
  if (!complete()) throw ProtocolError("a matrix taken before its last part");
  m_next = 0;
  return std::move(m_m);
}

// [SECTION] Frames.
std::string frame_bytes(const Frame& f) {
  if (f.payload.size() > kMaxPayload)
    throw ProtocolError(std::string("a ") + to_string(f.type) + " frame of " +
                        std::to_string(f.payload.size()) + " bytes is over the limit of " +
                        std::to_string(kMaxPayload));
  wire::Writer w;
  w.u32(kMagic);
  w.u32(uint32_t(f.version) | uint32_t(f.type) << 16);
  w.u64(f.id);
  w.u32(uint32_t(f.payload.size()));
  return w.take() + f.payload;
}

namespace {
struct Header {
  uint16_t version;
  Type type;
  uint64_t id;
  uint32_t len;
};
Header read_header(const std::string& bytes) {
  wire::Reader r(bytes);
  if (r.u32() != kMagic)
    throw ProtocolError(
        "not a TileScope engine (its output does not start with the engine protocol's frames: a shell that "
        "prints text at login, or a command that is not `tilescope serve`?)");
  const uint32_t vt = r.u32();
  Header h{uint16_t(vt & 0xffff), Type(vt >> 16), r.u64(), r.u32()};
  const uint16_t t = uint16_t(vt >> 16);
  if (t < uint16_t(Type::Hello) || t > uint16_t(Type::Last))
    throw ProtocolError("unknown engine message type " + std::to_string(t));
  // A Hello of any version is read (its first fields name the versions); anything else must match.
  if (h.version != kProtocol && h.type != Type::Hello)
    throw ProtocolError("engine protocol version " + std::to_string(h.version) + ", expected " +
                        std::to_string(kProtocol));
  if (h.len > kMaxPayload)
    throw ProtocolError("an engine message of " + std::to_string(h.len) + " bytes is over the limit of " +
                        std::to_string(kMaxPayload));
  return h;
}
}  // namespace

size_t unframe(const std::string& bytes, Frame* out) {
  if (bytes.size() < kHeaderBytes) return 0;
  const Header h = read_header(bytes.substr(0, kHeaderBytes));
  if (bytes.size() - kHeaderBytes < h.len) return 0;
  out->type = h.type;
  out->id = h.id;
  out->version = h.version;
  out->payload = bytes.substr(kHeaderBytes, h.len);
  return kHeaderBytes + h.len;
}

NoSigpipe::NoSigpipe() {
  sigemptyset(&m_pipe);
  sigaddset(&m_pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old);
  sigset_t pending;
  sigpending(&pending);
  m_was_pending = sigismember(&pending, SIGPIPE) == 1;
}

NoSigpipe::~NoSigpipe() {
  if (!m_was_pending) {
    const timespec zero{0, 0};
    while (sigtimedwait(&m_pipe, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
}

bool write_frame(int fd, const Frame& f) {
  const NoSigpipe guard;
  return wire::write_bytes(fd, frame_bytes(f));
}

wire::ReadStatus read_frame(int fd, Frame* out, int timeout_ms, const std::function<void(size_t)>& arrived) {
  std::string head(kHeaderBytes, '\0');
  // A started frame must finish within 30 s: a slow link carries 64 MiB in that time at 20 Mbit/s.
  const wire::ReadExact g = wire::read_exact(fd, head.data(), kHeaderBytes, timeout_ms, 30000);
  if (g == wire::ReadExact::Eof) return wire::ReadStatus::Eof;
  if (g == wire::ReadExact::Timeout) return wire::ReadStatus::Timeout;
  const Header h = read_header(head);
  if (arrived) arrived(kHeaderBytes);
  out->type = h.type;
  out->id = h.id;
  out->version = h.version;
  out->payload.assign(h.len, '\0');
  for (size_t at = 0; at < h.len;) {
    const size_t n = std::min<size_t>(kReadPieceBytes, h.len - at);
    if (wire::read_exact(fd, out->payload.data() + at, n, 30000, 30000) != wire::ReadExact::All)
      throw ProtocolError("the other side closed the connection mid-message");
    at += n;
    if (arrived) arrived(n);
  }
  return wire::ReadStatus::Ok;
}

}  // namespace ts::remote
