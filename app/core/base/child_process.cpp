#include "core/base/child_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace ts {

pid_t spawn_process(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("spawn_process: no program");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (const auto& [from, to] : spec.moves) posix_spawn_file_actions_adddup2(&fa, from, to);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.own_process_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0].c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot run " + spec.argv[0] + ": " + std::strerror(rc));
  return pid;
}

std::string exit_status_words(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "it was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "it exited with code " + std::to_string(WEXITSTATUS(status));
  return "it stopped";
}

int reap_process(pid_t pid, double patience_s) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience_s);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return status;  // not ours (already reaped)
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int reap_process_group(pid_t pid, double patience_s) {
  const int status = reap_process(pid, patience_s);
  kill(-pid, SIGKILL);  // the group outlives its leader while a member lives, so its id is not reused yet
  return status;
}

}  // namespace ts
