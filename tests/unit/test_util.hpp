#pragma once
// Helpers shared by the unit tests: temporary folders and running the tilescope binary.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <sys/wait.h>

namespace ts::test {

// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    m_path = std::filesystem::temp_directory_path() /
             ("tilescope-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  std::string file(const std::string& name) const { return (m_path / name).string(); }
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

// A kernel file of a few hundred bytes that keeps NVRTC busy for minutes: 2^levels copies of A[0] summed,
// from `levels` nested macros (16 levels: 60 s on the CI machine, 228 s on a laptop; each level doubles it).
inline std::string macro_bomb(int levels) {
  std::string s = "#define X0(a) a\n";
  for (int i = 1; i <= levels; ++i)
    s += "#define X" + std::to_string(i) + "(a) X" + std::to_string(i - 1) + "(a)+X" + std::to_string(i - 1) +
         "(a)\n";
  s += "__global__ void bomb(const float* A, const float* B, float* C, int N) { C[0] = X" +
       std::to_string(levels) + "(A[0]); }\n";
  return s;
}

struct CmdResult {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line, capturing its output and exit code.
inline CmdResult run_cmd(const std::string& cmd) {
  CmdResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace ts::test
