#pragma once
// [SECTION] What panels, menus, shortcuts and the frame's hosts ask for, as typed requests: one type per kind
// of request (rq::Run, rq::StartSweep, rq::ExportFigure, ...), queued on the AppState (AppState::asked) and
// taken by whoever carries it out: App each frame (runs, files, sessions, sweeps, the bandwidth, figures, the
// GL self-check), the frame's host (a screenshot, a panel's export, quitting), the Matrices panel (a zoom).
// A request of a kind already pending replaces it (asking twice for a run runs once; the newest sweep plan
// wins), so nothing is done twice and the newest request counts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/plots/figure.hpp"
#include "core/plots/replay_figure.hpp"
#include "core/engine/problem.hpp"
#include "core/engine/sweep.hpp"
#include "core/io/schedule_trace.hpp"

namespace ts::ui {

// A region of the matrices to show (Result panel's "show it", snapshot --zoom).
struct ZoomRequest {
  double row0 = 0, col0 = 0, rows = 1, cols = 1;
  bool all_maps = true;  // false: C and the error map only (they share their axes)
};

// A figure of one plot (the plot's Export figure): rendered offscreen at a chosen size and theme.
struct FigureRequest {
  PlotKind plot = PlotKind::Timings;
  FigureSize size;
  float scale = 1.5f;  // text and line scale of the figure
  FigureTheme theme = FigureTheme::Dark;
  std::string title;
  // PlotKind::Replay: the moments shown (empty: the starts of the waves and the end), and the animated WebP.
  std::vector<ReplayTimeArg> replay_times;
  bool webp = false;
  int frames = kDefaultReplayFrames;
};

// Where a sweep runs when the window has several engines: the current device, every connected device (each
// point on each, to compare), or split across the devices identical to the current one (to finish sooner).
enum class SweepWhere { ThisDevice, EveryDevice, SplitIdentical };

namespace rq {
struct Run {};  // the problem now, even with auto-run off (Run, Space, a preset, a new build of your kernel)
struct Quit {};
struct Screenshot {};   // the whole window as PNG (F12)
struct ResetLayout {};  // the default dock layout
struct BringToFront {   // panels in front of their tabs (snapshot --front, its exports)
  std::vector<std::string> panels;
};
struct OpenInputs {};  // A and B from .npy files
struct SaveC {};       // C as .npy
struct ExportPanel {   // a panel's "Export PNG + CSV": its rectangle of the next frame and its data
  std::string panel;   // window name, for the crop
  std::string stem;    // file name stem, e.g. "timings"
  std::string csv;
};
// Press these panels' "Export PNG + CSV" as if a person did (snapshot --export-panels): each panel takes its
// name out when it exports, one export a frame; the request is done when none is left.
struct PressExport {
  std::set<std::string> panels;
};
struct Zoom {
  ZoomRequest region;
};
struct CheckGl {  // the GL self-check (gl_health.hpp), and why it runs
  std::string trigger;
};
inline constexpr const char* kGlCheckOnRequest = "on request";  // the trigger of the person's "Check again"
struct SaveSession {};
struct OpenSession {};  // another session as an overlay
struct CloseOverlay {
  size_t index = 0;
};
struct StartSweep {  // the Sweep panel's plan (validated by App)
  SweepSpec plan;
  SweepWhere where = SweepWhere::ThisDevice;
};
struct TimeTiles {  // "Time the other tiles" (Result panel): measured like a sweep, into the session
  std::vector<ProblemSpec> points;
};
// "Measure N missing" (Result panel's fastest rung): the ladder's configurations not measured at this shape,
// measured like a sweep into the session; App leaves out, and names, those the engine cannot run here.
struct TimeRungs {
  std::vector<ProblemSpec> points;
};
struct CancelSweep {};
struct MeasureBandwidth {};  // the DRAM roof (Roofline panel)
struct Reconnect {};         // the current engine's link was lost: start its command again (status bar)
// [SECTION] The window's engines (App: File > Connect to engine..., the Controls' Device).
struct ConnectEngine {  // start this command and add its engine ("": this machine's own)
  std::string name, command;
  bool choose = true;  // measure on it once connected
};
struct ChooseEngine {  // measure on this engine (App's engine id)
  uint64_t id = 0;
};
struct DisconnectEngine {  // close this engine (its session stays, as an overlay)
  uint64_t id = 0;
};
struct ExportFigure {
  FigureRequest figure;
};
struct ExportScheduleTrace {  // the Tile schedule's "Export Perfetto trace" (trace event JSON, App writes it)
  std::shared_ptr<const TileTrace> trace;
  ScheduleTraceContext context;
};
// A person's kernel (the controller takes these, user_kernel_controller.hpp).
struct OpenKernel {  // read this file (File > Open kernel, a drop, --kernel-file): open it, or read it again
  std::string path;
};
struct ChooseKernelFile {};  // File > Open kernel...: the open dialog
struct SwitchKernel {        // another __global__ function of the same file
  std::string name;
};
struct ApplyKernelForm {};  // the form's corrections: understand and build again
struct ResetKernelForm {};  // back to what TileScope proposes
struct SaveKernel {};       // write the editor's text to the file (then it is rebuilt and run again)
struct RevertKernel {};     // load the file into the editor again
struct SanitizeKernel {};   // Check with compute-sanitizer
struct FetchSass {          // the SASS panel's listings, in order (App asks the engine off the UI thread)
  std::vector<std::pair<std::string, int>> which;  // kernel, tile
};
}  // namespace rq

// New kinds go at the end as lines of their own: a new kind changes two lines, never reflows the list.
// clang-format off
using Request = std::variant<rq::Run, rq::Quit, rq::Screenshot, rq::ResetLayout, rq::BringToFront,
                             rq::OpenInputs, rq::SaveC, rq::ExportPanel, rq::PressExport, rq::Zoom,
                             rq::CheckGl, rq::SaveSession, rq::OpenSession, rq::CloseOverlay, rq::StartSweep,
                             rq::TimeTiles, rq::CancelSweep, rq::MeasureBandwidth, rq::ExportFigure,
                             rq::OpenKernel, rq::ChooseKernelFile, rq::SwitchKernel, rq::ApplyKernelForm,
                             rq::ResetKernelForm, rq::SaveKernel, rq::RevertKernel, rq::SanitizeKernel,
                             rq::Reconnect, rq::ConnectEngine, rq::ChooseEngine, rq::DisconnectEngine,
                             rq::ExportScheduleTrace,
                             rq::FetchSass,
                             rq::TimeRungs>;
// clang-format on

// The requests pending, at most one of each kind.
class Requests {
 public:
  void push(Request r) {
    const size_t kind = r.index();
    m_pending.erase(std::remove_if(m_pending.begin(), m_pending.end(),
                                   [kind](const Request& x) { return x.index() == kind; }),
                    m_pending.end());
    m_pending.push_back(std::move(r));
  }
  template <class T>
  bool pending() const {
    return peek<T>() != nullptr;
  }
  // The pending request of kind T, left pending (nullptr: none).
  template <class T>
  const T* peek() const {
    for (const Request& r : m_pending)
      if (const T* t = std::get_if<T>(&r)) return t;
    return nullptr;
  }
  // The pending request of kind T, taken (nullopt: none).
  template <class T>
  std::optional<T> take() {
    for (auto it = m_pending.begin(); it != m_pending.end(); ++it)
      if (T* t = std::get_if<T>(&*it)) {
        std::optional<T> out(std::move(*t));
        m_pending.erase(it);
        return out;
      }
    return std::nullopt;
  }
  bool empty() const { return m_pending.empty(); }

 private:
  std::vector<Request> m_pending;
};

}  // namespace ts::ui
