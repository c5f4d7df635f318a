#pragma once
// [SECTION] An animated WebP, frame by frame, through libwebp's animation encoder (WebPAnimEncoder, Debian's
// libwebp-dev): each frame an RGBA picture (top row first, every frame the same size) shown for its duration,
// encoded lossless (flat colours and text stay exact and small). The replay figure's animation; no GL here.
#include <cstdint>
#include <string>
#include <vector>

struct WebPAnimEncoder;

namespace ts::gfx {

class WebpAnimation {
 public:
  // Throws std::runtime_error when libwebp refuses the size (16383 a side at most).
  WebpAnimation(int width, int height);
  ~WebpAnimation();
  WebpAnimation(const WebpAnimation&) = delete;
  WebpAnimation& operator=(const WebpAnimation&) = delete;

  int width() const { return m_w; }
  int height() const { return m_h; }
  int frames() const { return m_frames; }
  // Adds a frame (width x height x 4 bytes; alpha is ignored: a figure is opaque) shown for duration_ms.
  // Cost: one lossless encode of the picture (tens of milliseconds at 1280 x 720). Throws std::runtime_error.
  void add(const std::vector<uint8_t>& rgba, int duration_ms);
  // The file's bytes, looping forever. Throws std::runtime_error when no frame was added.
  std::string finish();

 private:
  WebPAnimEncoder* m_enc = nullptr;
  int m_w = 0, m_h = 0, m_frames = 0;
  int m_timestamp_ms = 0;
};

}  // namespace ts::gfx
