#pragma once
// [SECTION] The replay of a traced launch as a figure (issue 29): small multiples of the tile grid of C
// (tiles down and across like C, row 0 at the top), one per moment, each headed by its time and counts, and a
// legend (waiting / running, coloured by SM / done). The still draws every moment in one strip; each frame of
// the animated WebP draws one moment with the same function (figure_render.hpp), so the file and the window
// agree. The blocks' colours are the Tile schedule's replay layer's (ReplayLayer, sm_colour), made opaque.
#include <memory>
#include <string>
#include <vector>

#include "core/plots/replay_figure.hpp"
#include "ui/panels/algorithm_overlays.hpp"
#include "ui/plots/plots.hpp"

namespace ts::ui {

struct ReplayStripData {
  std::shared_ptr<const ScheduleReplay> replay;
  int sm_count = 0;
  std::vector<ReplayMoment> moments;  // one panel each, in this order
  bool timeline = false;              // under the pictures, where the (first) moment is in the launch
};

// The figure's opaque colours for a dark or a light theme: waiting near black, done a light grey (neither is
// on the Spectral map the SMs take their colours from).
ReplayColours replay_figure_colours(bool light);

// Draws the panels into a region of `size` at the cursor: as many rows as make the pictures largest, the
// legend under them. Textures (one per panel) are made in the current GL context and kept while the moments
// stay. The report: the area of the first picture, every picture's (PlotReport::panels), the colours of
// "waiting", "done" and each "SM n".
class ReplayStrip {
 public:
  PlotReport draw(const ReplayStripData& d, ImVec2 size, bool light);

 private:
  std::vector<ReplayLayer> m_layers;
};

}  // namespace ts::ui
