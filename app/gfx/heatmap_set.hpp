#pragma once
// [SECTION] The heatmaps of one window: A, B, C and the error map of the latest result, as pictures a panel
// draws. The set owns every GPU decision (interop or host path, batching, cache keys, mapping, hover reads),
// so the Matrices panel only says what each plot shows and draws the texture it gets back.
//
// Orientation, once for every path: texel row 0 of every picture is row `region.row0` of the matrix (the top
// row); draw_rows_down() in ui/ hands such a texture to a plot whose row axis points down.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/plots/colormap.hpp"
#include "core/plots/heatmap.hpp"
#include "gfx/heatmap_gl.hpp"
#include "core/engine/matrix_store.hpp"

namespace ts::gfx {

// What one plot shows this frame.
struct HeatmapRequest {
  MatrixId id = MatrixId::A;
  PlotLimits limits;       // the plot's visible limits in element coordinates (x = column, y = row)
  int px_w = 1, px_h = 1;  // the plot's size in screen pixels
  Reduce reduce = Reduce::Mean;
  const Colormap* colormap = nullptr;  // nullptr: the first map
  RangeMode range = RangeMode::Auto;
  ValueRange manual;
  int tile_m = 0, tile_n = 0;  // the kernel's output tile (rows x columns of C); 0: none
};

struct HeatmapPicture {
  bool ok = false;
  std::string error;     // why there is no picture
  GLuint texture = 0;    // RGBA8, out_w x out_h; texel row 0 = region.row0
  LodRegion region;      // the whole elements it shows, and the values they were reduced to (w x h)
  ValueRange data;       // the finite min and max of the elements in the region (not of the reduced values)
  ValueRange shown;      // the colour scale used (from data, the range mode and the manual bounds)
  bool interop = false;  // values written by CUDA into the GL texture
  bool grid = false;     // the tile grid is drawn
  int64_t block_rows = 1, block_cols = 1;  // elements per value (1 x 1: every element is its own pixel)
  double refresh_ms = 0;                   // the last reduction of this map (its batch, for a new result)
  // A remote engine's matrices: the view asked for is on its way. With ok, the picture is an earlier view of
  // the same matrices (drawn at its own region, coarser or beside the new one) until it comes; without ok,
  // nothing of this result has come yet.
  bool pending = false;
  // A remote engine's view asked coarse first over a slow link (coarse_first() in core/plots/heatmap.hpp):
  // region has kCoarseFactor times fewer values each way than the view, the texture is still at the view's
  // screen size (each value a block of pixels over its elements), and the whole view is on its way (pending).
  bool coarse = false;
};

struct HoverValue {
  enum class State { None, Pending, Ready, Failed } state = State::None;
  int64_t row = -1, col = -1;
  float value = 0;
  std::string error;
};

class HeatmapSet {
 public:
  // GL context current. cuda_device: the engine's device (-1: the CPU engine): interop is probed here.
  // interop_off_why non-empty: the host path, for that reason (interop is not even probed).
  explicit HeatmapSet(int cuda_device, const std::string& interop_off_why = "");
  ~HeatmapSet();
  HeatmapSet(const HeatmapSet&) = delete;
  HeatmapSet& operator=(const HeatmapSet&) = delete;

  const InteropStatus& interop() const { return m_ctx.interop(); }
  HeatmapContext& context() { return m_ctx; }                         // the GL self-check draws through it
  const std::string& path_note() const { return m_ctx.path_note(); }  // shared memory, or mapped textures
  // The matrices of a new result (serial grows with every result). Every map seen before is refreshed at its
  // current view, all together (one interop map/unmap, one synchronisation), when the first picture of the
  // new result is asked for.
  void set_store(std::shared_ptr<const MatrixStore> store, uint64_t serial);
  const MatrixStore* store() const { return m_store.get(); }
  uint64_t serial() const { return m_serial; }

  // The picture for this frame; reduces and paints only what changed since the last call for that map. A
  // failure is reported in the picture (and interop failures switch the set to the host path for good).
  const HeatmapPicture& picture(const HeatmapRequest& req);

  // The exact value of one element, for hover readouts: immediate from host memory, asynchronous from a GPU
  // or a remote engine (State::Pending for a frame or two, or a round trip); never blocks the frame.
  HoverValue hover(MatrixId id, int64_t row, int64_t col);
  // An answer of a remote engine is awaited (a heatmap or a hover value): the window keeps drawing frames
  // until it comes.
  bool waiting() const;

  // Tests and benchmarks: the map's layer (its value texture and painter).
  const HeatmapLayer& layer(MatrixId id) const { return m_maps[size_t(id)].layer; }

 private:
  struct Map {
    HeatmapLayer layer;
    HeatmapPicture pic;
    std::optional<HeatmapRequest> last;  // the request served last (its view is refreshed on a new store)
    uint64_t serial = 0;                 // the store its values come from
    Reduce reduce = Reduce::Mean;
    std::string painted;  // the key the colour texture was painted with
    int out_w = 0, out_h = 0;
    // A remote store: the reduction in flight (one per map: a drag asks again once the last one is in), and
    // the screen size the shown region was asked at.
    std::shared_ptr<PendingReduce> pending;
    bool pending_coarse = false;  // it is the coarse view of the view asked
    LodRegion pending_region;
    Reduce pending_mode = Reduce::Mean;
    uint64_t pending_serial = 0;
    int pending_w = 1, pending_h = 1;
    double pending_t0 = 0;
    int region_w = 1, region_h = 1;
  };
  void refresh_batch(const HeatmapRequest& current);
  // The region `req` shows and its texture's size; false when it has none, its failure then in m.pic.
  bool view_of(Map& m, const HeatmapRequest& req, LodRegion* region, int* out_w, int* out_h) const;
  const HeatmapPicture& fail(Map& m, const std::string& why) const;
  const HeatmapPicture& remote_picture(Map& m, const HeatmapRequest& req);
  void collect_remote(Map& m);  // a remote answer that came, into the map's picture
  const HeatmapPicture& paint(Map& m, const HeatmapRequest& req, const LodRegion& region, int out_w,
                              int out_h);
  static LodRegion region_of(const HeatmapRequest& req, const MatrixStore& store, int* out_w, int* out_h);

  HeatmapContext m_ctx;
  std::shared_ptr<const MatrixStore> m_store;
  uint64_t m_serial = 0;
  std::array<Map, 4> m_maps;
  // Hover: the last value asked for and the read in flight (GPU stores).
  HoverValue m_hover;
  MatrixId m_hover_id = MatrixId::A;
  uint64_t m_hover_serial = 0;
  std::shared_ptr<const MatrixStore> m_reading_store;  // kept alive until its read has landed
  std::optional<std::array<int64_t, 3>> m_reading;     // id, row, col of the read in flight
  std::shared_ptr<PendingElement> m_remote_read;       // a remote store's hover value in flight
  std::array<int64_t, 4> m_remote_key{};               // its id, row, col and store serial
  std::unique_ptr<AsyncElementRead> m_reader;  // declared last: waits for its read before the rest goes
};

}  // namespace ts::gfx
