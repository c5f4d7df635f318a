#include "kernels/user/user_sanitize.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/child_process.hpp"
#include "core/io/files.hpp"
#include "kernels/user/nvrtc_workshop.hpp"
#include "kernels/user/user_worker.hpp"
#include "kernels/user/worker_client.hpp"
#include "core/user_kernel/your_kernel.hpp"

namespace ts {

namespace fs = std::filesystem;

std::string find_compute_sanitizer(std::string* why) {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("TILESCOPE_COMPUTE_SANITIZER"); e && *e) candidates.push_back(e);
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/compute-sanitizer");
  }
  if (const char* e = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(e) + "/bin/compute-sanitizer");
#if defined(TILESCOPE_CUDA_BIN_DIR)
  candidates.push_back(std::string(TILESCOPE_CUDA_BIN_DIR) + "/compute-sanitizer");
#endif
  candidates.push_back("/usr/local/cuda/bin/compute-sanitizer");
  candidates.push_back("/usr/local/cuda/compute-sanitizer/compute-sanitizer");
  for (const auto& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  if (why)
    *why =
        "compute-sanitizer was not found (looked in $TILESCOPE_COMPUTE_SANITIZER, PATH, $CUDA_HOME/bin and "
        "/usr/local/cuda/bin): it comes with the CUDA toolkit";
  return "";
}

namespace {

// "ERROR SUMMARY: 3 errors" / "RACECHECK SUMMARY: 2 hazards displayed (...)": the number and the line.
int count_issues(const std::string& out, std::string* line) {
  int issues = -1;
  std::istringstream is(out);
  std::string l;
  while (std::getline(is, l)) {
    const size_t at = l.find(" SUMMARY: ");
    if (at == std::string::npos) continue;
    const size_t num = at + 10;
    size_t end = num;
    while (end < l.size() && std::isdigit(static_cast<unsigned char>(l[end]))) ++end;
    if (end == num) {
      if (l.find("No hazards", num) != std::string::npos || l.find("0 errors", num) != std::string::npos)
        issues = 0;
    } else {
      issues = std::atoi(l.substr(num, end - num).c_str());
    }
    const size_t start = l.find_first_not_of("= ");
    *line = start == std::string::npos ? l : l.substr(start);
  }
  return issues;
}

}  // namespace

std::string first_sanitizer_errors(const std::string& output, int max_errors) {
  std::istringstream is(output);
  std::string line, out;
  int errors = 0;
  bool in_error = false;
  while (std::getline(is, line)) {
    const size_t text = line.find_first_not_of("= ");
    if (line.rfind("=========", 0) != 0 || text == std::string::npos) {
      in_error = false;
      continue;
    }
    const std::string t = line.substr(text);
    const size_t indent = text - 9;  // spaces after the tool's "=========" prefix
    if (indent <= 1 &&
        (t.rfind("Invalid", 0) == 0 || t.rfind("Misaligned", 0) == 0 || t.rfind("Out-of-range", 0) == 0 ||
         t.rfind("Error", 0) == 0 || t.rfind("Program hit", 0) == 0)) {
      if (errors == max_errors) break;
      ++errors;
      in_error = true;
      out += (out.empty() ? "" : "\n") + t;
    } else if (in_error && t.rfind("at ", 0) == 0 && t.find(':') != std::string::npos) {
      out += " " + t;  // the first frame: the kernel and its source line
      in_error = false;
    }
  }
  return out;
}

std::vector<SanitizerReport> sanitize_user_kernel(const UserKernel& k, const ProblemSpec& spec, int arch,
                                                  int device, const std::vector<std::string>& tools,
                                                  double timeout_s, const CancelToken* cancel) {
  std::vector<SanitizerReport> out;
  ProblemSpec s = spec;
  s.m = small_dim_like(s.m);
  s.n = small_dim_like(s.n);
  s.k = small_dim_like(s.k);
  if (k.square_only()) s.m = s.n = s.k = std::min({s.m, s.n, s.k});
  auto fail_all = [&](const std::string& why) { return reports_not_run(tools, s, why); };
  std::string why;
  const std::string tool_path = find_compute_sanitizer(&why);
  if (tool_path.empty()) return fail_all(why);
  std::string exe;
  try {
    exe = worker_executable();
  } catch (const std::exception& e) {
    return fail_all(e.what());
  }
  // The job: the plain build and its launch at the capped shape.
  WorkerJob job;
  try {
    const ExprVars v{s.m, s.n, s.k, s.tile};
    const auto mod = build_user_kernel(k, s.tile, arch, v, cancel);
    const LaunchGeometry g = launch_geometry(k.spec(), v);
    job.load.cubin = mod->cubin;
    job.load.name = mod->lowered_name;
    job.launch.grid = g.grid;
    job.launch.block = g.block;
    job.launch.smem = g.smem;
    job.launch.args = kernel_args(k.decl(), k.spec(), v);
    job.launch.poison_c = true;
    job.m = s.m;
    job.n = s.n;
    job.k = s.k;
    job.seed = s.seed;
  } catch (const std::exception& e) {
    return fail_all(e.what());
  }
  std::random_device rd;
  const fs::path file =
      fs::temp_directory_path() / ("tilescope-job-" + std::to_string(rd()) + std::to_string(rd()));
  try {
    write_file(file, encode_worker_job(job), Replace::Never);
  } catch (const std::exception& e) {
    return fail_all(std::string("cannot write the job file: ") + e.what());
  }
  struct Remove {
    fs::path p;
    ~Remove() {
      std::error_code ec;
      fs::remove(p, ec);
    }
  } remove{file};

  for (const std::string& tool : tools) {
    SanitizerReport r;
    r.tool = tool;
    r.shape = s;
    const auto t0 = std::chrono::steady_clock::now();
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
      r.problem = std::string("pipe failed: ") + std::strerror(errno);
      out.push_back(r);
      continue;
    }
    SpawnSpec spec;
    spec.argv = {tool_path, "--tool",      tool,       "--print-limit",       "20", exe, "worker",
                 "--job",   file.string(), "--device", std::to_string(device)};
    spec.moves = {{pipefd[1], 1}, {pipefd[1], 2}};
    // In TileScope's process group: a third-party program cannot be told to end with TileScope
    // (PR_SET_PDEATHSIG), so the terminal's Ctrl+C must still reach it.
    pid_t pid = -1;
    try {
      pid = spawn_process(spec);
    } catch (const std::exception& e) {
      close(pipefd[1]);
      close(pipefd[0]);
      r.problem = e.what();
      out.push_back(r);
      continue;
    }
    close(pipefd[1]);
    bool timed_out = false, cancelled = false;
    char buf[4096];
    for (;;) {
      pollfd p{pipefd[0], POLLIN, 0};
      const int pr = poll(&p, 1, 50);
      if (pr > 0) {
        const ssize_t n = read(pipefd[0], buf, sizeof buf);
        if (n <= 0) break;
        if (r.output.size() < (1u << 20)) r.output.append(buf, size_t(n));
      }
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (el > timeout_s) {
        timed_out = true;
        break;
      }
      if (cancel && cancel->cancelled()) {
        cancelled = true;
        break;
      }
    }
    close(pipefd[0]);
    int status = 0;
    if (timed_out || cancelled) kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.issues = count_issues(r.output, &r.summary);
    r.ran = !r.summary.empty() && !timed_out && !cancelled;
    if (timed_out) r.problem = tool + " did not finish within " + std::to_string(int(timeout_s)) + " s";
    if (cancelled) r.problem = "cancelled";
    if (!r.ran && r.problem.empty())
      r.problem =
          tool + " stopped without a summary (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    out.push_back(r);
    if (cancelled) break;
  }
  return out;
}

}  // namespace ts
