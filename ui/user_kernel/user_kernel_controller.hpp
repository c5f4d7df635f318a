#pragma once
// [SECTION] The window's side of a person's own kernel, once per frame: reads a file (in the background),
// chooses its kernel, builds it with NVRTC (in the background; the last good build stays registered while a
// new one compiles or fails), registers it as "yours: <name>" and asks for a run; watches the file (its size
// and time of change, polled every second: no inotify) and rebuilds and re-runs on every save, from the
// window's editor or any other; runs compute-sanitizer in a worker when asked. Messages go through
// AppState::say(). Reaches the engine only through the backend and its kernel workshop
// (kernel_workshop.hpp).
#include <future>
#include <memory>
#include <string>

#include "ui/app_state.hpp"
#include "core/base/cancel.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/engine/job_runner.hpp"

namespace ts {
class Backend;
class KernelWorkshop;
class UserKernel;
struct CompiledModule;
}  // namespace ts

namespace ts::ui {

class UserKernelController {
 public:
  // Its background work (reading, building, the tiles' builds, compute-sanitizer) runs as `jobs`' jobs.
  UserKernelController(Backend& backend, JobRunner& jobs);
  ~UserKernelController();
  UserKernelController(const UserKernelController&) = delete;
  UserKernelController& operator=(const UserKernelController&) = delete;

  // Handles the requests in s.user, the background work that finished, and the watcher.
  void frame(AppState& s);
  double poll_interval_s = 1.0;

 private:
  struct Read {
    std::string path;
    bool reload = false;
    std::shared_ptr<KernelSource> source;
    std::string raw;  // the whole file (a .py file's too), for the editor
    std::vector<std::string> kernels;
    std::string error;
    int64_t size = -1, mtime = 0;
  };
  struct Built {
    std::shared_ptr<const UserKernel> kernel;
    std::shared_ptr<const CompiledModule> module;
    int tile = 0;
    std::string error;
    bool compile_error = false;
  };
  void start_read(AppState& s, const std::string& path, bool reload);
  void take_read(AppState& s, Read r);
  void understand(AppState& s, const UserKernelSpec* spec);
  void start_build(AppState& s, std::shared_ptr<const UserKernel> k);
  void take_build(AppState& s, Built b);
  void start_tiles(AppState& s);
  void watch(AppState& s);
  void save_editor(AppState& s);
  void start_sanitize(AppState& s);
  int tile_for(const AppState& s, const UserKernel& k) const;

  Backend& m_backend;
  KernelWorkshop* m_workshop;  // the backend's (null: it takes no kernels of yours)
  bool m_gpu = false;
  GpuModel m_device_model;
  GpuModel m_model;                               // the GPU of the resource table
  std::shared_ptr<KernelSource> m_source;         // the file as last read
  std::shared_ptr<const UserKernel> m_candidate;  // understood, being built
  std::shared_ptr<const UserKernel> m_good;       // registered
  JobRunner::Job<Read> m_reading;
  JobRunner::Job<Built> m_building;
  CancelToken m_build_cancel;  // the build in flight: a newer one cancels it (its compiler is killed)
  CancelToken m_stop;          // every compile of this controller: set when the window closes
  JobRunner::Job<std::vector<TileBuild>> m_tiles;
  JobRunner::Job<std::vector<SanitizerView>> m_sanitizing;
  std::string m_queued_path;  // asked for while another read was in flight
  bool m_queued_reload = false;
  // The watcher: the file's size and time of change when last read, and when to look next.
  int64_t m_size = -1;
  int64_t m_mtime = 0;
  double m_next_poll = 0;
  // The headers of the kernel last understood (its folder's, include_resolver.hpp), watched with the file.
  struct HeaderStamp {
    std::string path;
    int64_t size = -1, mtime = 0;
  };
  std::vector<HeaderStamp> m_header_stamps;
};

}  // namespace ts::ui
