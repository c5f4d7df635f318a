#include "gfx/texture.hpp"
#include "gfx/window.hpp"  // gl_usable

#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <stb_image_write.h>  // its implementation: stb_impl.cpp

#include "core/io/files.hpp"

namespace ts::gfx {

GLuint make_nearest_texture() {
  GLuint t = 0;
  glGenTextures(1, &t);
  glBindTexture(GL_TEXTURE_2D, t);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return t;
}

Texture2D::~Texture2D() {
  if (m_id && gl_usable()) glDeleteTextures(1, &m_id);
}
Texture2D::Texture2D(Texture2D&& o) noexcept
    : m_id(std::exchange(o.m_id, 0)), m_w(std::exchange(o.m_w, 0)), m_h(std::exchange(o.m_h, 0)) {}
Texture2D& Texture2D::operator=(Texture2D&& o) noexcept {
  if (this != &o) {
    if (m_id && gl_usable()) glDeleteTextures(1, &m_id);
    m_id = std::exchange(o.m_id, 0);
    m_w = std::exchange(o.m_w, 0);
    m_h = std::exchange(o.m_h, 0);
  }
  return *this;
}

void Texture2D::upload_rgba(int w, int h, const uint8_t* rgba) {
  if (!gl_usable()) return;  // a lost context: nothing to upload to
  if (!m_id) m_id = make_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, m_id);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  if (w != m_w || h != m_h) {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    m_w = w;
    m_h = h;
  } else {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
  }
}

Framebuffer::Framebuffer(int w, int h) : m_w(w), m_h(h) {
  glGenTextures(1, &m_color);
  glBindTexture(GL_TEXTURE_2D, m_color);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glGenFramebuffers(1, &m_fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, m_color, 0);
  GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    glDeleteFramebuffers(1, &m_fbo);
    glDeleteTextures(1, &m_color);
    throw std::runtime_error("offscreen framebuffer " + std::to_string(w) + " x " + std::to_string(h) +
                             " is incomplete (status 0x" + std::to_string(status) + ")");
  }
}

Framebuffer::~Framebuffer() {
  if (!gl_usable()) return;  // gone with a lost context
  glDeleteFramebuffers(1, &m_fbo);
  glDeleteTextures(1, &m_color);
}

void Framebuffer::bind() const {
  glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
  glViewport(0, 0, m_w, m_h);
}
void Framebuffer::unbind() {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

std::vector<uint8_t> Framebuffer::read_rgba() const {
  glBindFramebuffer(GL_READ_FRAMEBUFFER, m_fbo);
  auto px = read_pixels_rgba(0, 0, m_w, m_h);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  return px;
}

std::vector<uint8_t> read_pixels_rgba(int x, int y, int w, int h) {
  std::vector<uint8_t> px(size_t(w) * size_t(h) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  // GL's origin is bottom-left; images start at the top.
  const size_t row = size_t(w) * 4;
  std::vector<uint8_t> tmp(row);
  for (int r = 0; r < h / 2; ++r) {
    uint8_t* a = px.data() + size_t(r) * row;
    uint8_t* b = px.data() + size_t(h - 1 - r) * row;
    std::memcpy(tmp.data(), a, row);
    std::memcpy(a, b, row);
    std::memcpy(b, tmp.data(), row);
  }
  for (size_t i = 3; i < px.size(); i += 4) px[i] = 255;  // screenshots are opaque
  return px;
}

void write_png(const std::string& path, int w, int h, const std::vector<uint8_t>& rgba, Replace replace) {
  std::vector<uint8_t> png;
  auto sink = [](void* ctx, void* data, int size) {
    auto* v = static_cast<std::vector<uint8_t>*>(ctx);
    v->insert(v->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
  };
  if (!stbi_write_png_to_func(sink, &png, w, h, 4, rgba.data(), w * 4))
    throw std::runtime_error(path + ": PNG encoding failed");
  write_file(path, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()), replace);
}

}  // namespace ts::gfx
