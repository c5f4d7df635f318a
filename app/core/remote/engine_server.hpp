#pragma once
// [SECTION] `tilescope serve`: a backend behind the engine protocol (protocol.hpp) on two file descriptors
// (standard input and output), for a window or a command line on another machine (`--engine "ssh gpu-box
// tilescope serve"`). Requests are answered as they finish, in any order: a run in flight does not hold back
// a hover value or a heatmap of the last run's matrices, which stay in the engine's memory (GPU memory on the
// CUDA backend) until the window releases them. A Cancel stops the request it names. The server returns when
// its input closes (the window went away: everything in flight is cancelled first) and never listens on a
// network port: reaching it, authenticating and encrypting are the engine command's business (ssh).
#include <cstdint>
#include <memory>
#include <string>

#include "core/engine/backend.hpp"
#include "core/remote/protocol.hpp"

namespace ts::remote {

struct ServeStats {
  uint64_t requests = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  std::string ended;  // why it stopped, in words ("the window closed the connection")
};

// Serves until `in_fd` reaches its end or the peer breaks the protocol. Returns what happened; throws
// IncompatiblePeer when the window speaks another protocol version (after saying so to it) and
// wire::ProtocolError for a malformed frame.
ServeStats serve(const std::shared_ptr<Backend>& backend, int in_fd, int out_fd);

// What the engine says about itself in its Hello.
EngineInfo describe_engine(const Backend& b);

}  // namespace ts::remote
