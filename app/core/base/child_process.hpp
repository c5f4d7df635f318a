#pragma once
// [SECTION] Starting TileScope's helper processes (the kernel worker, the compiler, compute-sanitizer) the
// one way: posix_spawn with the descriptors the child needs moved to fixed numbers, every signal at its
// default and none blocked (a thread of the window may block some), and, for a child that must not hear the
// terminal's Ctrl+C, a process group of its own. Plain C++ and POSIX.
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace ts {

struct SpawnSpec {
  std::vector<std::string> argv;           // argv[0] is the program's path
  std::vector<std::pair<int, int>> moves;  // {descriptor here, number in the child}, in order
  bool own_process_group = false;          // the terminal's signals (Ctrl+C) reach the parent only
};

// Starts it; throws std::runtime_error naming the program and the reason.
pid_t spawn_process(const SpawnSpec& spec);

// What a wait status means, in words: "it was killed by signal 11 (Segmentation fault)", "it exited with
// code 3".
std::string exit_status_words(int status);

// Waits for `pid` at most `patience_s` seconds, then kills it (SIGKILL) and waits; returns its wait status.
int reap_process(pid_t pid, double patience_s);
// The same for a child started with own_process_group, then what is left of its group killed too (a shell's
// children: `sh -c "ssh box ..."`), so nothing it started outlives it holding its pipes open.
int reap_process_group(pid_t pid, double patience_s);

}  // namespace ts
