#pragma once
// [SECTION] Heatmaps on the GPU's GL side: a value texture (R32F) with its pixel buffer, a colormap table
// texture, the colouring shader (shaders/heatmap.frag) and the offscreen target it draws into. The values
// come either straight from CUDA through the pixel buffer (interop.hpp) or from host memory (the fallback);
// the colouring is the same either way.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gfx/gl.hpp"
#include "core/plots/colormap.hpp"
#include "gfx/interop.hpp"
#include "core/engine/matrix_store.hpp"
#include "gfx/shared_memory.hpp"
#include "gfx/texture.hpp"

namespace ts::gfx {

// w x h float values in an R32F texture (CUDA writes it through interop, or the host uploads it).
class ValueTexture {
 public:
  ValueTexture() = default;
  ~ValueTexture();
  ValueTexture(const ValueTexture&) = delete;
  ValueTexture& operator=(const ValueTexture&) = delete;

  // (Re)allocates the texture's storage when the size changes (unregister it from CUDA first). Returns true
  // when it did.
  bool resize(int w, int h);
  void upload_from_host(const float* values);  // h rows of w floats
  std::vector<float> read_back() const;        // the texture's values (tests)
  GLuint texture() const { return m_tex; }
  int width() const { return m_w; }
  int height() const { return m_h; }

 private:
  GLuint m_tex = 0;
  int m_w = 0, m_h = 0;
};

// A 256 x 1 RGBA8 colormap table.
class LutTexture {
 public:
  LutTexture() = default;
  ~LutTexture();
  LutTexture(const LutTexture&) = delete;
  LutTexture& operator=(const LutTexture&) = delete;
  void upload(const std::array<std::array<uint8_t, 4>, 256>& rgba);
  GLuint texture() const { return m_tex; }

 private:
  GLuint m_tex = 0;
};

// A linked GL program from vertex + fragment source. Throws std::runtime_error with the compiler's log.
class ShaderProgram {
 public:
  ShaderProgram(const char* vertex_src, const char* fragment_src);
  ~ShaderProgram();
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;
  GLuint id() const { return m_prog; }
  GLint uniform(const char* name) const;

 private:
  GLuint m_prog = 0;
};

struct ColorParams {
  float lo = 0, hi = 1;        // colour scale
  int64_t row0 = 0, col0 = 0;  // region origin (elements)
  int64_t rows = 1, cols = 1;  // region extent (elements)
  int tile_m = 0, tile_n = 0;  // grid (0: none)
  // A grid line moves the data's colour this far toward white (on dark colours) or black (on light ones):
  // enough to be seen on any colormap, well below the contrast of the data itself.
  float grid_weight = 0.25f;
};

// Where the painter reads w x h values: an R32F 2-D texture, or a texture buffer of R32F (memory shared with
// CUDA), row 0 first.
struct ValueSource {
  GLuint texture = 0;
  bool buffer = false;
  int w = 0, h = 0;
};

// Draws values through a colormap into an RGBA8 target of the requested size (one per heatmap; the target is
// what the plot shows and what a PNG export reads).
class HeatmapPainter {
 public:
  HeatmapPainter();
  ~HeatmapPainter();
  HeatmapPainter(const HeatmapPainter&) = delete;
  HeatmapPainter& operator=(const HeatmapPainter&) = delete;

  // Renders; restores the previously bound framebuffer, viewport and program. Returns the colour texture.
  GLuint paint(const ValueSource& values, const LutTexture& lut, const ColorParams& p, int out_w, int out_h);
  GLuint texture() const { return m_target ? m_target->texture() : 0; }
  std::vector<uint8_t> read_rgba() const;  // the last painted target, top row = region row 0 first

 private:
  ShaderProgram m_prog;                          // values from a 2-D texture
  std::unique_ptr<ShaderProgram> m_buffer_prog;  // values from a texture buffer (made when first needed)
  GLuint m_vao = 0;
  std::unique_ptr<Framebuffer> m_target;
};

}  // namespace ts::gfx

// [SECTION] One heatmap of a matrix store: values refreshed through CUDA-GL interop when the store lives on
// the GPU that drives this GL context, else through host memory; painted through the colormap on demand.
namespace ts::gfx {

// How interop hands values from CUDA to GL: memory both share for good (Vulkan-allocated, no per-refresh
// handover), or GL textures mapped into CUDA for each refresh. Auto: shared when the driver offers it.
// Off: the host path even where interop would work (TILESCOPE_INTEROP=off, or after the GL self-check found
// interop drawing wrong pictures).
enum class InteropPath { Auto, Shared, Mapped, Off };

// Shared by the heatmaps of one GL context: whether interop is possible, which path it takes, and the CUDA
// stream it uses.
class HeatmapContext {
 public:
  // cuda_device: the engine's CUDA device (-1: CPU engine). Probes interop on the current GL context.
  // Off: never asks CUDA about the GL context; `off_why` is the reason shown for it.
  explicit HeatmapContext(int cuda_device, InteropPath path = InteropPath::Auto,
                          const std::string& off_why = "");
  ~HeatmapContext();
  const InteropStatus& interop() const { return m_status; }
  DisplayStream* stream() const { return m_stream.get(); }
  int cuda_device() const { return m_device; }
  // The shared-memory path, when it is in use (null: mapped textures or the host path).
  SharedContext* shared() const { return m_shared.get(); }
  const std::string& path_note() const {
    return m_path_note;
  }  // "shared memory" or "mapped textures (<why>)"
  // Turns interop off from now on (a registration or map failed): the reason goes to the status bar.
  void disable(const std::string& why);
  // Leaves the shared-memory path for mapped textures (a shared buffer failed).
  void disable_shared(const std::string& why);

 private:
  int m_device;
  InteropStatus m_status;
  std::unique_ptr<DisplayStream> m_stream;
  std::unique_ptr<SharedContext> m_shared;
  std::string m_path_note;
};

class HeatmapLayer {
 public:
  struct Refresh {
    ValueRange range;  // finite range of the values now in the texture
    bool interop = false;
  };
  // Reduces `r` of matrix `id` into the value texture. Interop when ctx allows it for this store; on an
  // interop failure the context is disabled and the host path is taken (the caller sees interop == false).
  Refresh refresh(HeatmapContext& ctx, const MatrixStore& store, MatrixId id, const LodRegion& r,
                  Reduce mode);

  struct Job {
    HeatmapLayer* layer;
    const MatrixStore* store;
    MatrixId id;
    LodRegion region;
    Reduce mode;
    Refresh result;  // out
  };
  // Several heatmaps at once: the interop ones share one map, one unmap and one synchronisation (what a new
  // result costs when all four maps change); the others go through host memory one by one.
  static void refresh_all(HeatmapContext& ctx, std::vector<Job>& jobs);
  // Values reduced elsewhere (a remote engine's answer): r.h rows of r.w floats into the value texture.
  void upload(const LodRegion& r, const float* values);
  // Colours the current values into an out_w x out_h texture; returns it.
  GLuint paint(const Colormap& map, const ColorParams& p, int out_w, int out_h);
  const ValueTexture& values() const { return m_values; }
  // The values the last refresh produced, w x h, row 0 first, whichever memory holds them (tests).
  std::vector<float> read_values() const;
  bool shared() const { return m_source_shared; }
  const HeatmapPainter* painter() const { return m_painter.get(); }
  int registrations() const { return m_interop.registrations(); }
  InteropTexture& interop_texture() { return m_interop; }

 private:
  ValueTexture m_values;
  InteropTexture m_interop;
  LutTexture m_lut;
  std::string m_lut_name;
  std::unique_ptr<HeatmapPainter> m_painter;
  std::vector<float> m_host;  // host path scratch
  // The shared-memory path: the buffer CUDA writes and GL reads (it keeps its context's ordering alive).
  std::unique_ptr<SharedBuffer> m_shared;
  bool m_source_shared = false;  // the last refresh went to m_shared (else to m_values)
  int m_w = 0, m_h = 0;          // its size
  void refresh_host(const MatrixStore& store, MatrixId id, const LodRegion& r, Reduce mode, Refresh& out);
  void prepare(const LodRegion& r);
};

}  // namespace ts::gfx
