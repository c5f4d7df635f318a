#pragma once
// [SECTION] Move-only GL resources.
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/files.hpp"
#include "gfx/gl.hpp"

namespace ts::gfx {

// A new 2-D texture name with nearest filtering and edge clamping (one texel per value, no blending), bound.
GLuint make_nearest_texture();

// An RGBA8 2-D texture, filled from host memory (nearest filtering: one texel per matrix block).
class Texture2D {
 public:
  Texture2D() = default;
  ~Texture2D();
  Texture2D(Texture2D&& o) noexcept;
  Texture2D& operator=(Texture2D&& o) noexcept;
  Texture2D(const Texture2D&) = delete;
  Texture2D& operator=(const Texture2D&) = delete;

  // (Re)allocates when the size changes; rgba holds w * h * 4 bytes, row 0 first.
  void upload_rgba(int w, int h, const uint8_t* rgba);
  GLuint id() const { return m_id; }
  int width() const { return m_w; }
  int height() const { return m_h; }

 private:
  GLuint m_id = 0;
  int m_w = 0, m_h = 0;
};

// An offscreen framebuffer with an RGBA8 colour texture, for snapshots and panel exports.
class Framebuffer {
 public:
  Framebuffer(int w, int h);
  ~Framebuffer();
  Framebuffer(const Framebuffer&) = delete;
  Framebuffer& operator=(const Framebuffer&) = delete;

  void bind() const;  // binds it and sets the viewport to its size
  static void unbind();
  int width() const { return m_w; }
  int height() const { return m_h; }
  GLuint texture() const { return m_color; }
  GLuint id() const { return m_fbo; }
  // Pixels of the framebuffer, top row first, RGBA8.
  std::vector<uint8_t> read_rgba() const;

 private:
  GLuint m_fbo = 0, m_color = 0;
  int m_w, m_h;
};

// Pixels of the currently bound read framebuffer (x, y, w, h in GL coordinates), top row first.
std::vector<uint8_t> read_pixels_rgba(int x, int y, int w, int h);

// Writes an RGBA8 image as PNG through the program's writer (app/core/io/files.hpp: never a half-written
// file), replacing what `replace` allows (Replace::Reserved: the name a NewNames took for it). Throws
// ValidationError when the target may not be replaced, std::runtime_error with the reason when writing fails.
void write_png(const std::string& path, int w, int h, const std::vector<uint8_t>& rgba, Replace replace);

}  // namespace ts::gfx
