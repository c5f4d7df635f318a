#pragma once
// [SECTION] Is OpenGL still drawing what it is told? On the H100 (driver 580), after a person's kernel
// faulted in another process, every new GL context of the GPU drew wrong pictures (glyphs missing, heatmaps
// blank or striped, whole frames one colour) while CUDA computed correctly. Nothing in GL reports that, so
// the program checks the pictures themselves: this file holds the GL half of the self-check (a known heatmap
// through the heatmap path, read back and compared with the CPU colouring) and what the driver says about the
// context (robustness and reset status). The glyph half, which needs Dear ImGui, is ui/gl_health.hpp.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gfx/gl.hpp"
#include "core/engine/matrix.hpp"
#include "core/engine/matrix_store.hpp"

namespace ts::gfx {

class HeatmapContext;

// What glGetGraphicsResetStatus says of the current context.
enum class ResetStatus {
  None,          // no reset
  Guilty,        // this context caused a reset
  Innocent,      // another context did
  Unknown,       // a reset of unknown cause
  NotAvailable,  // the context has no robustness (GL < 4.5 without KHR/ARB_robustness)
};
const char* to_string(ResetStatus s);

struct ContextRobustness {
  bool known = false;               // a usable context was current to ask (not one found lost)
  bool available = false;           // glGetGraphicsResetStatus can be asked
  bool reset_notification = false;  // created with LOSE_CONTEXT_ON_RESET: a reset is reported, not hidden
};
ContextRobustness context_robustness();  // of the current context
ResetStatus reset_status();              // of the current context; None after a reset was reported once
// Takes every pending GL error (at most 64: a lost context may report GL_CONTEXT_LOST at every call) and
// returns the first; *lost is set when one of them was GL_CONTEXT_LOST.
GLenum take_gl_errors(bool* lost = nullptr);

// Damage the self-check's tests inject on a machine whose GL works (Mesa), from TILESCOPE_SIMULATE_GL_DAMAGE
// (read once): "readback" (the pictures read back come out corrupted, as a broken driver returns them),
// "glyphs" (the font atlas in GL memory is wiped, so text really loses its glyphs), "lost" (the context
// reports a reset once). None of this happens unless the variable is set.
enum class GlDamage { None, Readback, Glyphs, Lost };
GlDamage simulated_gl_damage();
void simulate_gl_damage(GlDamage d);  // the same from a test in this process (overrides the variable)
// Applies GlDamage::Readback to pixels read back (a no-op otherwise).
void damage_readback(std::vector<uint8_t>& rgba);

// The heatmap path on a known picture: a 40 x 24 matrix whose every element has its own colour (row-major
// ramp through the colormap's 256 entries, one NaN) uploaded as values, coloured by the heatmap shader into
// an RGBA target at one pixel per element, read back and compared pixel by pixel with the CPU colouring. The
// painted texture stays alive for the caller to draw (the glyph half draws it through ImGui's renderer).
class HeatmapPatternCheck {
 public:
  static constexpr int kCols = 40, kRows = 24;
  HeatmapPatternCheck();
  ~HeatmapPatternCheck();
  HeatmapPatternCheck(const HeatmapPatternCheck&) = delete;
  HeatmapPatternCheck& operator=(const HeatmapPatternCheck&) = delete;

  // Paints and compares. False with what differed in `why`; *lost when GL said its context is lost.
  // Without arguments through host memory; with a heatmap context and a store of the pattern on its device
  // (Backend::probe_store of pattern()), the way the window's heatmaps take: CUDA-GL interop where it is on.
  bool run(std::string* why, bool* lost = nullptr, HeatmapContext* ctx = nullptr,
           const MatrixStore* store = nullptr);
  static std::shared_ptr<HostMatrix> pattern();    // the matrix drawn
  GLuint texture() const;                          // the painted picture (kCols x kRows, row 0 first)
  bool interop() const;                            // the last run's values came through CUDA-GL interop
  const std::vector<uint8_t>& expected() const;    // its CPU colouring, RGBA, row 0 first
  static std::vector<uint8_t> expected_picture();  // the same, without GL

 private:
  struct Impl;
  Impl* m;
};

// Compares two RGBA images of w x h: the pixels whose channels differ by more than `tolerance`, and the first
// few of them in words.
struct ImageDiff {
  int64_t differing = 0;
  std::string first;  // "pixel 3,7 = 0,0,0 instead of 68,1,84; ..."
};
ImageDiff compare_rgba(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, int w, int h,
                       int tolerance);

}  // namespace ts::gfx
