#pragma once
// Stream-K's (rung 10b, 10_streamk.cu) choice between sharing a partial last wave and rung 9 alone, shared
// with the GPU test that checks the plan of every launch against it. Plain C++.

namespace ts {

// Where the last wave is at least this full, every tile is made whole (rung 9's kernel alone): sharing its k
// tiles costs each shared tile partials written and read, more than the idle SMs of a nearly full wave.
// From the crossover measured at launch_streamk (73 % full: a tie; 88 %: 3-6 points lost).
inline constexpr double kStreamKShareBelowFill = 0.8;

}  // namespace ts
