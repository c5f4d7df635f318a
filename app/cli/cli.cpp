// What the commands share (cli.hpp).
#include "cli/cli.hpp"

#include <cstdio>
#include <sstream>

#include "core/user_kernel/kernel_workshop.hpp"
#include "core/io/npy.hpp"
#include "core/engine/problem.hpp"
#include "core/remote/remote_backend.hpp"
#include "kernels/engine/registry.hpp"

namespace ts::cli {

namespace {

// Options given with an empty value (--size "") are refused, not taken for "not given".
void refuse_empty_values(CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options())
    for (const std::string& v : opt->results())
      if (v.find_first_not_of(" \t") == std::string::npos && opt->get_expected_min() > 0)
        throw ts::ValidationError(opt->get_name() + " is empty; give it a value or leave it out");
}

// Every value given must be UTF-8: titles, names and paths go into JSON, CSV and messages (a value that is
// not is refused here, before any work, instead of failing in the JSON writer after it).
void refuse_invalid_utf8(CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options())
    for (const std::string& v : opt->results()) ts::require_utf8(v, opt->get_name());
}

}  // namespace

void add_problem_options(CLI::App* cmd, ProblemArgs& p) {
  add_engine_option(cmd, p.engine);
  cmd->add_option("--backend", p.backend, "auto (CUDA if a GPU is present), cuda or cpu")
      ->capture_default_str();
  cmd->add_option(
      "--kernel", p.kernel,
      "kernel name (see `tilescope list`; default tiled), or with --kernel-file the __global__ function "
      "to run");
  cmd->add_option("--tile", p.tile, "tile size (see `tilescope list`; default: the kernel's default)");
  cmd->add_option("--size", p.size, "M = N = K (default 1024; 256 on the CPU backend)");
  cmd->add_option("--m", p.m, "rows of A and C");
  cmd->add_option("--n", p.n, "columns of B and C");
  cmd->add_option("--k", p.k, "columns of A, rows of B");
  cmd->add_option("--input", p.input, "random, symmetric, identity, ones or ramp (A[i][j] = i, B[i][j] = j)")
      ->capture_default_str();
  cmd->add_option("--seed", p.seed, "seed of the random inputs")->capture_default_str();
  cmd->add_option("--a", p.a, "A from a 2-D float32 .npy file (with --b)");
  cmd->add_option("--b", p.b, "B from a 2-D float32 .npy file (with --a)");
  ts::cli::add_kernel_file_options(cmd, p.file);
}

ts::RunRequest build_request(const ProblemArgs& p, ts::Backend& backend) {
  ts::RunRequest req;
  ts::ProblemSpec& s = req.spec;
  req.memcheck_new_builds = !p.file.no_guard;
  if (!p.file.file.empty())
    s.kernel = ts::cli::load_kernel_file(p.file, p.kernel, p.tile, backend);  // "yours:<name>"
  else if (!p.file.params.empty() || !p.file.grid.empty() || !p.file.block.empty() || !p.file.smem.empty() ||
           !p.file.tile_macro.empty() || !p.file.hang_limit.empty() || !p.file.compile_limit.empty() ||
           p.file.tf32 || p.file.no_guard)
    throw ts::ValidationError(
        "--param, --grid, --block, --smem, --tile-macro, --hang-limit, --compile-limit, --tf32 and "
        "--no-guard go with --kernel-file");
  else
    s.kernel = p.kernel.empty() ? "tiled" : p.kernel;
  const bool tile_given = !p.tile.empty();
  if (tile_given) {
    s.tile = int(ts::parse_dim(p.tile, "--tile"));  // a number; the kernel says which values it allows
  } else {
    const auto kernels = backend.kernels();
    if (const ts::KernelInfo* k = ts::find_kernel(kernels, s.kernel)) s.tile = k->default_tile;
  }
  s.input = ts::parse_input_kind(p.input);
  s.seed = ts::parse_seed(p.seed, "--seed");
  const bool given_files = !p.a.empty() || !p.b.empty();
  if (given_files && (p.a.empty() || p.b.empty()))
    throw ts::ValidationError("give both --a and --b, or neither");
  const bool dims_given = !p.m.empty() || !p.n.empty() || !p.k.empty();
  if (!p.size.empty() && dims_given) throw ts::ValidationError("give either --size or --m/--n/--k, not both");
  if (!p.size.empty()) {
    s.m = s.n = s.k = ts::parse_dim(p.size, "--size");
  } else if (dims_given) {
    if (p.m.empty() || p.n.empty() || p.k.empty())
      throw ts::ValidationError("give all three of --m, --n and --k (or --size)");
    s.m = ts::parse_dim(p.m, "--m");
    s.n = ts::parse_dim(p.n, "--n");
    s.k = ts::parse_dim(p.k, "--k");
  } else {
    s.m = s.n = s.k = backend.kind() == "cpu" ? 256 : 1024;
  }
  if (!p.file.file.empty() && !given_files && !dims_given && p.size.empty())
    std::fprintf(stderr, "tilescope: %s at M = N = K = %lld (--size or --m/--n/--k to change)\n",
                 s.kernel.c_str(), (long long)s.m);
  if (given_files) {
    // Shapes and limits from the headers, before a single data byte is read or allocated.
    const ts::NpyHeader ha = ts::read_npy_header(p.a), hb = ts::read_npy_header(p.b);
    if (ha.cols != hb.rows) {
      std::ostringstream os;
      os << p.a << " is " << ha.rows << " x " << ha.cols << " and " << p.b << " is " << hb.rows << " x "
         << hb.cols << ": A's columns (" << ha.cols << ") must equal B's rows (" << hb.rows << ")";
      throw ts::ValidationError(os.str());
    }
    if ((dims_given || !p.size.empty()) && (s.m != ha.rows || s.k != ha.cols || s.n != hb.cols)) {
      // Sizes given together with files must agree with them.
      std::ostringstream os;
      os << "the sizes given (M x N x K = " << s.m << " x " << s.n << " x " << s.k
         << ") do not match the files (" << ha.rows << " x " << hb.cols << " x " << ha.cols << ")";
      throw ts::ValidationError(os.str());
    }
    ts::RunRequest shape_only = req;
    shape_only.spec.input = ts::InputKind::File;
    shape_only.spec.m = ha.rows;
    shape_only.spec.k = ha.cols;
    shape_only.spec.n = hb.cols;
    backend.validate(shape_only, tile_given);  // kernel, tile, CPU work limit, free GPU memory
    ts::check_host_memory(ha.data_bytes + hb.data_bytes,
                          "reading " + p.a + " and " + p.b + " (" + std::to_string(ha.rows) + " x " +
                              std::to_string(ha.cols) + " and " + std::to_string(hb.rows) + " x " +
                              std::to_string(hb.cols) + " float32)");
    auto a = std::make_shared<ts::HostMatrix>(ts::read_npy(p.a));
    ts::require_finite(*a, p.a);
    auto b = std::make_shared<ts::HostMatrix>(ts::read_npy(p.b));
    ts::require_finite(*b, p.b);
    req.a = std::move(a);
    req.b = std::move(b);
  }
  if (backend.kind() == "cpu") {
    // Without a GPU the kernel cannot run, but what can be checked here still is: the launch (the limits
    // every device shares) and the build (for sm_90), so a compile error or an impossible block is reported
    // as such.
    const ts::KernelWorkshop* workshop = backend.workshop();
    if (const auto user = workshop ? workshop->find(s.kernel) : nullptr) {
      ts::ProblemSpec probe = s;
      ts::validate_kernel(probe, backend.kernels(), tile_given);  // tile and square-only first
      const ts::ExprVars v{s.m, s.n, s.k, s.tile};
      ts::launch_geometry(user->spec(), v);
      if (workshop->can_build(nullptr)) workshop->build(*user, s.tile, 90, v);
    }
  }
  backend.validate(req, tile_given);
  return req;
}

ts::Replace replace_if(bool force) {
  return force ? ts::Replace::RegularFile : ts::Replace::Never;
}

std::shared_ptr<ts::Backend> open_backend(const std::string& choice, std::string* note,
                                          const std::string& engine, bool backend_given) {
  if (engine.empty()) return ts::make_backend(ts::parse_backend_choice(choice), note);
  if (backend_given)
    throw ts::ValidationError(
        "--backend chooses this machine's engine; with --engine, give it to the engine: "
        "--engine \"" +
        engine + " --backend " + choice + "\"");
  try {
    return std::make_shared<ts::remote::RemoteBackend>(engine);
  } catch (const ts::remote::EngineStartError& e) {
    throw ts::ValidationError(std::string("--engine: ") + e.what());
  }
}

void add_engine_option(CLI::App* cmd, std::string& engine) {
  cmd->add_option(
      "--engine", engine,
      "run on a remote engine: a command whose standard input and output reach `tilescope serve`, "
      "e.g. \"ssh gpu-box tilescope serve\" or \"srun --gres=gpu:1 tilescope serve\"");
}

// Standard output, or `path` written whole through the program's writer (checked by check_output_path first).
void write_text_output(const std::string& path, const std::string& text, bool force) {
  if (path.empty()) {
    std::fputs(text.c_str(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw std::runtime_error("writing to standard output failed");
    return;
  }
  ts::write_file(path, text, replace_if(force));
  std::fprintf(stderr, "wrote %s\n", path.c_str());
}

bool means_zero(const std::string& text) {
  return !text.empty() && text.find_first_not_of('0') == std::string::npos;
}

int CommandTable::run(int argc, char** argv) {
  try {
    m_app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return m_app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return m_app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return m_app.exit(e);
  } catch (const CLI::ParseError& e) {
    m_app.exit(e);
    return kExitUsage;
  }
  // The command given: the last parsed of the table (a subcommand is added after its parent), else the
  // default.
  const Command* chosen = &m_default;
  for (auto it = m_commands.rbegin(); it != m_commands.rend(); ++it)
    if (it->cmd->parsed()) {
      chosen = &*it;
      break;
    }
  try {
    // Every value given (to the app, the command, and its parent: bench's for bench heatmap) is checked.
    std::vector<CLI::App*> given{&m_app};
    for (const Command& c : m_commands)
      if (c.cmd->parsed()) given.push_back(c.cmd);
    for (CLI::App* cmd : given) {
      refuse_empty_values(cmd);
      refuse_invalid_utf8(cmd);
    }
    return chosen->run();
  } catch (const ValidationError& e) {
    std::fprintf(stderr, "tilescope: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope: %s\n", e.what());
    return kExitFailed;
  }
}

}  // namespace ts::cli
