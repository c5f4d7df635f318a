#include "cli/merge_cmd.hpp"

#include <cstdio>

#include "core/io/bench.hpp"
#include "core/io/merge.hpp"
#include "core/io/session.hpp"

namespace ts::cli {

void add_merge_options(CLI::App* cmd, MergeArgs& a) {
  cmd->add_option("sessions", a.inputs,
                  "the parts' session files (bench --shard I/N --session-out), in any order")
      ->required();
  cmd->add_option("--format", a.format, "the table: md, csv or json")->capture_default_str();
  cmd->add_option("--out", a.out, "write the table here instead of standard output");
  cmd->add_option("--session-out", a.session_out,
                  "also write every point as one session (in the whole sweep's order)");
  cmd->add_flag("--force", a.force, "replace an existing --out / --session-out file (a regular file only)");
  cmd->add_flag("--allow-mixed", a.allow_mixed,
                "merge parts measured on different devices, by different TileScope versions or under "
                "different policies (said on standard error)");
  cmd->add_flag("--partial", a.partial,
                "merge the points there are when shards or points are missing (the table says which)");
}

int cmd_merge(MergeArgs& a, const CLI::App& cmd) {
  (void)cmd;
  // Everything typed is checked before a file is read.
  if (a.format != "md" && a.format != "csv" && a.format != "json")
    throw ts::ValidationError("--format '" + a.format + "' is not one of md, csv, json");
  if (a.inputs.size() > size_t(ts::kMaxShards))
    throw ts::ValidationError("merge takes at most " + std::to_string(ts::kMaxShards) + " parts; " +
                              std::to_string(a.inputs.size()) + " were given");
  ts::check_output_path(a.out, replace_if(a.force), "--out");
  ts::check_output_path(a.session_out, replace_if(a.force), "--session-out");
  if (!a.out.empty() && a.out == a.session_out)
    throw ts::ValidationError("--out and --session-out are the same file: " + a.out);

  std::vector<ts::MergeInput> parts;
  parts.reserve(a.inputs.size());
  for (const std::string& path : a.inputs) parts.push_back({path, ts::load_session(path)});
  ts::MergeOptions options;
  options.allow_mixed = a.allow_mixed;
  options.partial = a.partial;
  const ts::MergeResult merged = ts::merge_parts(parts, options);
  for (const std::string& w : merged.warnings) std::fprintf(stderr, "tilescope merge: %s\n", w.c_str());

  size_t failed = 0;
  for (const auto& p : merged.table) failed += p.stop == "failed" ? 1 : 0;
  const ts::SweepPart& part = *merged.session.part;
  std::fprintf(stderr, "tilescope merge: %zu %s of sweep %s (%s): %zu of its %lld points%s\n", parts.size(),
               parts.size() == 1 ? "part" : "parts", part.sweep_sha256.substr(0, 12).c_str(),
               part.sweep.c_str(), merged.table.size(), (long long)part.points,
               failed ? (", " + std::to_string(failed) + " of them failed").c_str() : "");
  write_text_output(a.out, ts::format_bench(a.format, merged.meta, merged.table), a.force);
  if (!a.session_out.empty()) {
    ts::save_session(a.session_out, merged.session, a.force);
    std::fprintf(stderr, "wrote %s (%zu points)\n", a.session_out.c_str(), merged.session.records.size());
  }
  return kExitOk;
}

}  // namespace ts::cli
