#include "core/engine/sass_tool.hpp"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/child_process.hpp"

namespace ts {

namespace {

bool runnable(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

// Runs argv, returns its standard output and error together (at most `limit` bytes kept) and its status.
std::string run_capture(const std::vector<std::string>& argv, double timeout_s, int* status, size_t limit) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  SpawnSpec spec;
  spec.argv = argv;
  spec.moves = {{fds[1], 1}, {fds[1], 2}};
  if (devnull >= 0) spec.moves.insert(spec.moves.begin(), {devnull, 0});
  pid_t pid = -1;
  try {
    pid = spawn_process(spec);
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    if (devnull >= 0) close(devnull);
    throw;
  }
  close(fds[1]);
  if (devnull >= 0) close(devnull);
  std::string out;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[65536];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < limit) out.append(buf, size_t(n));
  }
  close(fds[0]);
  *status = reap_process(pid, timed_out ? 0 : 5);
  if (timed_out)
    throw std::runtime_error(argv[0] + " ran past " + std::to_string(int(timeout_s)) + " s and was stopped");
  return out;
}

std::string compact(const std::string& line) {
  // "        /*0050*/              @!P0 BRA 0xa50 ;        /* 0x... */" -> "/*0050*/ @!P0 BRA 0xa50 ;"
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (line.compare(i, 2, "/*") != 0 || i + 2 >= line.size() ||
      !std::isxdigit(static_cast<unsigned char>(line[i + 2])))
    return "";
  const size_t close_at = line.find("*/", i + 2);
  const size_t semi = line.find(';', close_at == std::string::npos ? i : close_at);
  if (close_at == std::string::npos || semi == std::string::npos) return "";
  std::string out = line.substr(i, close_at + 2 - i) + " ";
  bool space = false;
  for (size_t j = close_at + 2; j <= semi; ++j) {
    const char c = line[j];
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && out.back() != ' ') out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string sass_tool_version(const std::string& path) {
  int status = 0;
  std::string out;
  try {
    out = run_capture({path, "--version"}, 10, &status, 1 << 16);
  } catch (const std::exception&) {
    return "";
  }
  const size_t v = out.find(", V");
  if (v == std::string::npos) return "";
  size_t e = v + 3;
  while (e < out.size() && (std::isdigit(static_cast<unsigned char>(out[e])) || out[e] == '.')) ++e;
  return out.substr(v + 3, e - v - 3);
}

std::optional<SassTool> find_sass_tool(std::string* why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TILESCOPE_CUOBJDUMP"); env && *env) candidates.push_back(env);
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t a = 0;
    while (a <= p.size()) {
      size_t b = p.find(':', a);
      if (b == std::string::npos) b = p.size();
      if (b > a) candidates.push_back(p.substr(a, b - a) + "/cuobjdump");
      a = b + 1;
    }
  }
#if defined(TILESCOPE_CUDA_BIN_DIR)
  candidates.push_back(std::string(TILESCOPE_CUDA_BIN_DIR) + "/cuobjdump");
#endif
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
#if defined(TILESCOPE_CUOBJDUMP_AT_BUILD)
  candidates.push_back(TILESCOPE_CUOBJDUMP_AT_BUILD);
#endif
  for (const auto& c : candidates) {
    if (c.empty() || c[0] != '/' || !runnable(c)) continue;
    SassTool t;
    t.path = c;
    t.version = sass_tool_version(c);
    return t;
  }
  if (why)
    *why =
        "cuobjdump was not found (not on PATH, not in the CUDA toolkit's bin folder; TILESCOPE_CUOBJDUMP "
        "names one; scripts/install-deps.sh installs a pinned copy for builds)";
  return std::nullopt;
}

std::vector<SassFunctionText> split_cuobjdump(const std::string& output, size_t max_bytes) {
  std::vector<SassFunctionText> out;
  int arch = 0;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(pos, end - pos);
    pos = end + 1;
    const size_t code = line.find("code for sm_");
    if (code != std::string::npos) {
      arch = std::atoi(line.c_str() + code + 12);
      continue;
    }
    const size_t fn = line.find("Function : ");
    if (fn != std::string::npos) {
      SassFunctionText f;
      f.arch = arch;
      size_t a = fn + 11, b = a;
      while (b < line.size() && !std::isspace(static_cast<unsigned char>(line[b]))) ++b;
      f.name = line.substr(a, b - a);
      out.push_back(std::move(f));
      continue;
    }
    if (out.empty()) continue;
    const std::string c = compact(line);
    if (c.empty()) continue;
    if (out.back().text.size() + c.size() + 1 > max_bytes)
      throw std::runtime_error("the listing of " + out.back().name + " is over " +
                               std::to_string(max_bytes >> 20) + " MiB");
    out.back().text += c;
    out.back().text += '\n';
  }
  return out;
}

SassFunctionText disassemble_cubin(const SassTool& tool, const std::string& cubin,
                                   const std::string& function, double timeout_s) {
  if (cubin.empty()) throw std::runtime_error("no cubin to disassemble");
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/tilescope-sass-XXXXXX.cubin";
  const int fd = mkstemps(name.data(), 6);
  if (fd < 0)
    throw std::runtime_error("cannot make a temporary file for the cubin: " +
                             std::string(std::strerror(errno)));
  size_t done = 0;
  while (done < cubin.size()) {
    const ssize_t n = write(fd, cubin.data() + done, cubin.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      unlink(name.c_str());
      throw std::runtime_error("cannot write the cubin to " + name);
    }
    done += size_t(n);
  }
  close(fd);
  int status = 0;
  std::string out;
  try {
    out = run_capture({tool.path, "-sass", name}, timeout_s, &status, size_t(256) << 20);
  } catch (...) {
    unlink(name.c_str());
    throw;
  }
  unlink(name.c_str());
  if (status != 0)
    throw std::runtime_error(tool.label() + " failed on the cubin (" + exit_status_words(status) +
                             "): " + out.substr(0, 400));
  for (auto& f : split_cuobjdump(out))
    if (f.name == function) return f;
  throw std::runtime_error(tool.label() + " lists no function " + function + " in the cubin");
}

}  // namespace ts
