#include "gfx/webp.hpp"

#include <stdexcept>

#include <webp/encode.h>
#include <webp/mux.h>

namespace ts::gfx {

WebpAnimation::WebpAnimation(int width, int height) : m_w(width), m_h(height) {
  WebPAnimEncoderOptions opt;
  if (!WebPAnimEncoderOptionsInit(&opt)) throw std::runtime_error("libwebp: version mismatch");
  opt.anim_params.loop_count = 0;  // forever
  opt.anim_params.bgcolor = 0xff000000;
  m_enc = WebPAnimEncoderNew(width, height, &opt);
  if (!m_enc)
    throw std::runtime_error("libwebp cannot make an animation of " + std::to_string(width) + " x " +
                             std::to_string(height));
}

WebpAnimation::~WebpAnimation() {
  if (m_enc) WebPAnimEncoderDelete(m_enc);
}

void WebpAnimation::add(const std::vector<uint8_t>& rgba, int duration_ms) {
  if (rgba.size() != size_t(m_w) * size_t(m_h) * 4)
    throw std::invalid_argument("WebP frame: " + std::to_string(rgba.size()) + " bytes for " +
                                std::to_string(m_w) + " x " + std::to_string(m_h) + " RGBA");
  WebPConfig cfg;
  if (!WebPConfigInit(&cfg)) throw std::runtime_error("libwebp: version mismatch");
  cfg.lossless = 1;
  cfg.method = 1;    // fast: the pictures are flat colours and text
  cfg.quality = 50;  // lossless: the effort spent on the size, not the fidelity
  cfg.exact = 1;
  WebPPicture pic;
  if (!WebPPictureInit(&pic)) throw std::runtime_error("libwebp: version mismatch");
  pic.use_argb = 1;
  pic.width = m_w;
  pic.height = m_h;
  // Opaque: the figure's window covers every pixel; an alpha below 255 from blended text would only make
  // the file larger and the viewer's background show through.
  std::vector<uint8_t> opaque(rgba);
  for (size_t i = 3; i < opaque.size(); i += 4) opaque[i] = 255;
  if (!WebPPictureImportRGBA(&pic, opaque.data(), m_w * 4)) {
    WebPPictureFree(&pic);
    throw std::runtime_error("libwebp: out of memory importing a frame");
  }
  const int ok = WebPAnimEncoderAdd(m_enc, &pic, m_timestamp_ms, &cfg);
  WebPPictureFree(&pic);
  if (!ok)
    throw std::runtime_error(std::string("libwebp: cannot add a frame: ") + WebPAnimEncoderGetError(m_enc));
  m_timestamp_ms += std::max(1, duration_ms);
  ++m_frames;
}

std::string WebpAnimation::finish() {
  if (m_frames == 0) throw std::runtime_error("an animation needs a frame");
  // The end time of the last frame: its duration.
  if (!WebPAnimEncoderAdd(m_enc, nullptr, m_timestamp_ms, nullptr))
    throw std::runtime_error(std::string("libwebp: ") + WebPAnimEncoderGetError(m_enc));
  WebPData data;
  WebPDataInit(&data);
  if (!WebPAnimEncoderAssemble(m_enc, &data)) {
    WebPDataClear(&data);
    throw std::runtime_error(std::string("libwebp cannot assemble the animation: ") +
                             WebPAnimEncoderGetError(m_enc));
  }
  std::string out(reinterpret_cast<const char*>(data.bytes), data.size);
  WebPDataClear(&data);
  return out;
}

}  // namespace ts::gfx
