#include "gfx/heatmap_gl.hpp"
#include "gfx/window.hpp"  // gl_usable

#include <stdexcept>
#include <string>
#include <vector>

#include "shaders_embedded.hpp"

namespace ts::gfx {

// [SECTION] ValueTexture
ValueTexture::~ValueTexture() {
  if (m_tex && gl_usable()) glDeleteTextures(1, &m_tex);
}

bool ValueTexture::resize(int w, int h) {
  if (w < 1 || h < 1)
    throw std::invalid_argument("value texture size " + std::to_string(w) + " x " + std::to_string(h));
  if (w == m_w && h == m_h && m_tex) return false;
  if (!m_tex) m_tex = make_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, m_tex);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, nullptr);
  m_w = w;
  m_h = h;
  return true;
}

void ValueTexture::upload_from_host(const float* values) {
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  glBindTexture(GL_TEXTURE_2D, m_tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, m_w, m_h, GL_RED, GL_FLOAT, values);
}

std::vector<float> ValueTexture::read_back() const {
  std::vector<float> v(size_t(m_w) * size_t(m_h));
  GLuint fbo = 0;
  GLint prev = 0;
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev);
  glGenFramebuffers(1, &fbo);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
  glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, m_tex, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(0, 0, m_w, m_h, GL_RED, GL_FLOAT, v.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(prev));
  glDeleteFramebuffers(1, &fbo);
  return v;
}

// [SECTION] LutTexture
LutTexture::~LutTexture() {
  if (m_tex && gl_usable()) glDeleteTextures(1, &m_tex);
}

void LutTexture::upload(const std::array<std::array<uint8_t, 4>, 256>& rgba) {
  if (!m_tex) m_tex = make_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, m_tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 256, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
}

// [SECTION] ShaderProgram
namespace {
GLuint compile(GLenum kind, const char* src, const char* what) {
  GLuint s = glCreateShader(kind);
  glShaderSource(s, 1, &src, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    GLint n = 0;
    glGetShaderiv(s, GL_INFO_LOG_LENGTH, &n);
    std::string log(size_t(std::max(n, 1)), '\0');
    glGetShaderInfoLog(s, n, nullptr, log.data());
    glDeleteShader(s);
    throw std::runtime_error(std::string("cannot compile ") + what + ": " + log);
  }
  return s;
}
}  // namespace

ShaderProgram::ShaderProgram(const char* vs, const char* fs) {
  GLuint v = compile(GL_VERTEX_SHADER, vs, "shaders/heatmap.vert");
  GLuint f = 0;
  try {
    f = compile(GL_FRAGMENT_SHADER, fs, "shaders/heatmap.frag");
  } catch (...) {
    glDeleteShader(v);
    throw;
  }
  m_prog = glCreateProgram();
  glAttachShader(m_prog, v);
  glAttachShader(m_prog, f);
  glLinkProgram(m_prog);
  glDeleteShader(v);
  glDeleteShader(f);
  GLint ok = 0;
  glGetProgramiv(m_prog, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint n = 0;
    glGetProgramiv(m_prog, GL_INFO_LOG_LENGTH, &n);
    std::string log(size_t(std::max(n, 1)), '\0');
    glGetProgramInfoLog(m_prog, n, nullptr, log.data());
    glDeleteProgram(m_prog);
    throw std::runtime_error("cannot link the heatmap shader: " + log);
  }
}

ShaderProgram::~ShaderProgram() {
  if (m_prog && gl_usable()) glDeleteProgram(m_prog);
}

GLint ShaderProgram::uniform(const char* name) const {
  return glGetUniformLocation(m_prog, name);
}

// [SECTION] HeatmapPainter
HeatmapPainter::HeatmapPainter() : m_prog(shaders::kHeatmapVert, shaders::kHeatmapFrag) {
  glGenVertexArrays(1, &m_vao);
}

HeatmapPainter::~HeatmapPainter() {
  if (m_vao && gl_usable()) glDeleteVertexArrays(1, &m_vao);
}

namespace {
// The fragment shader with TS_VALUES_BUFFER defined (right after its #version line).
std::string buffer_variant(const char* src) {
  std::string s = src;
  const size_t eol = s.find('\n');
  return s.insert(eol == std::string::npos ? s.size() : eol + 1, "#define TS_VALUES_BUFFER\n");
}
}  // namespace

GLuint HeatmapPainter::paint(const ValueSource& values, const LutTexture& lut, const ColorParams& p,
                             int out_w, int out_h) {
  if (out_w < 1 || out_h < 1) throw std::invalid_argument("heatmap target size must be positive");
  if (values.buffer && !m_buffer_prog)
    m_buffer_prog =
        std::make_unique<ShaderProgram>(shaders::kHeatmapVert, buffer_variant(shaders::kHeatmapFrag).c_str());
  const ShaderProgram& prog = values.buffer ? *m_buffer_prog : m_prog;
  const GLenum target = values.buffer ? GL_TEXTURE_BUFFER : GL_TEXTURE_2D;
  if (!m_target || m_target->width() != out_w || m_target->height() != out_h)
    m_target = std::make_unique<Framebuffer>(out_w, out_h);
  // Save what ImGui's renderer (or anyone) had bound, restore it afterwards.
  GLint prev_fbo = 0, prev_prog = 0, prev_vao = 0, prev_tex = 0, prev_active = 0, vp[4];
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &prev_fbo);
  glGetIntegerv(GL_CURRENT_PROGRAM, &prev_prog);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &prev_vao);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &prev_active);
  glGetIntegerv(GL_VIEWPORT, vp);
  const GLboolean blend = glIsEnabled(GL_BLEND), scissor = glIsEnabled(GL_SCISSOR_TEST);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);

  m_target->bind();
  glUseProgram(prog.id());
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, lut.texture());
  glActiveTexture(GL_TEXTURE0);
  glGetIntegerv(values.buffer ? GL_TEXTURE_BINDING_BUFFER : GL_TEXTURE_BINDING_2D, &prev_tex);
  glBindTexture(target, values.texture);
  glUniform1i(prog.uniform("u_values"), 0);
  glUniform1i(prog.uniform("u_lut"), 1);
  glUniform2f(prog.uniform("u_range"), p.lo, p.hi);
  glUniform2i(prog.uniform("u_extent"), GLint(p.cols), GLint(p.rows));
  glUniform2i(prog.uniform("u_view"), values.w, values.h);
  glUniform2i(prog.uniform("u_target"), out_w, out_h);
  glUniform2f(prog.uniform("u_origin"), float(p.col0), float(p.row0));
  glUniform2i(prog.uniform("u_tile"), p.tile_n, p.tile_m);
  glUniform1f(prog.uniform("u_grid_weight"), p.grid_weight);
  glBindVertexArray(m_vao);
  glDrawArrays(GL_TRIANGLES, 0, 3);

  glBindVertexArray(GLuint(prev_vao));
  glBindTexture(target, GLuint(prev_tex));
  glActiveTexture(GLenum(prev_active));
  glUseProgram(GLuint(prev_prog));
  glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prev_fbo));
  glViewport(vp[0], vp[1], vp[2], vp[3]);
  if (blend) glEnable(GL_BLEND);
  if (scissor) glEnable(GL_SCISSOR_TEST);
  return m_target->texture();
}

std::vector<uint8_t> HeatmapPainter::read_rgba() const {
  if (!m_target) return {};
  std::vector<uint8_t> px(size_t(m_target->width()) * size_t(m_target->height()) * 4);
  GLint prev = 0;
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, m_target->id());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, m_target->width(), m_target->height(), GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(prev));
  return px;
}

}  // namespace ts::gfx

namespace ts::gfx {

// [SECTION] HeatmapContext / HeatmapLayer
HeatmapContext::HeatmapContext(int cuda_device, InteropPath path, const std::string& off_why)
    : m_device(cuda_device),
      m_status(path == InteropPath::Off ? InteropStatus{false, off_why} : probe_interop(cuda_device)) {
  if (!m_status.on) return;
  try {
    m_stream = std::make_unique<DisplayStream>(cuda_device);
  } catch (const std::exception& e) {
    disable(e.what());
    return;
  }
  std::string why = "not asked for";
  if (path != InteropPath::Mapped) m_shared = SharedContext::create(cuda_device, m_stream->get(), &why);
  m_path_note = m_shared ? "shared memory" : "mapped textures (no shared memory: " + why + ")";
  if (path == InteropPath::Shared && !m_shared) disable("shared memory was asked for: " + why);
}

HeatmapContext::~HeatmapContext() = default;

void HeatmapContext::disable(const std::string& why) {
  m_status.on = false;
  m_status.why = why;
  m_shared.reset();
}

void HeatmapContext::disable_shared(const std::string& why) {
  m_shared.reset();
  m_path_note = "mapped textures (shared memory failed: " + why + ")";
}

void HeatmapLayer::prepare(const LodRegion& r) {
  // A new size means new texture storage: unregister it from CUDA before GL respecifies it.
  if (r.w != m_values.width() || r.h != m_values.height()) m_interop.detach();
  m_values.resize(r.w, r.h);
}

void HeatmapLayer::refresh_host(const MatrixStore& store, MatrixId id, const LodRegion& r, Reduce mode,
                                Refresh& out) {
  m_host.resize(size_t(r.w) * size_t(r.h));
  out.range = store.reduce(id, r, mode, m_host.data());
  out.interop = false;
  m_values.upload_from_host(m_host.data());
  m_source_shared = false;
}

void HeatmapLayer::upload(const LodRegion& r, const float* values) {
  prepare(r);
  m_values.upload_from_host(values);
  m_source_shared = false;
}

std::vector<float> HeatmapLayer::read_values() const {
  if (m_source_shared && m_shared) {
    m_shared->before_gl_reads();  // a read through GL, ordered after CUDA's writes
    return m_shared->read_back(size_t(m_w) * size_t(m_h));
  }
  return m_values.read_back();
}

HeatmapLayer::Refresh HeatmapLayer::refresh(HeatmapContext& ctx, const MatrixStore& store, MatrixId id,
                                            const LodRegion& r, Reduce mode) {
  std::vector<Job> jobs{Job{this, &store, id, r, mode, {}}};
  refresh_all(ctx, jobs);
  return jobs[0].result;
}

void HeatmapLayer::refresh_all(HeatmapContext& ctx, std::vector<Job>& jobs) {
  std::vector<Job*> gpu;
  for (Job& j : jobs) {
    validate_lod_region(j.region, j.store->rows(j.id), j.store->cols(j.id));
    j.layer->prepare(j.region);
    if (ctx.interop().on && ctx.stream() && j.store->cuda_device() == ctx.cuda_device())
      gpu.push_back(&j);
    else
      j.layer->refresh_host(*j.store, j.id, j.region, j.mode, j.result);
  }
  if (gpu.empty()) return;
  // Shared memory: the LOD kernels write the buffers GL reads; no map or unmap, the semaphores order the two.
  if (SharedContext* sh = ctx.shared()) {
    try {
      DisplayStream& ds = *ctx.stream();
      for (Job* j : gpu) {
        HeatmapLayer& l = *j->layer;
        const size_t bytes = size_t(j->region.w) * size_t(j->region.h) * sizeof(float);
        if (!l.m_shared || l.m_shared->bytes() < bytes) {
          l.m_shared.reset();
          l.m_shared = sh->make_buffer(std::max(bytes, size_t(4096)));
        }
      }
      unsigned* keys = ds.reset_range_keys(int(gpu.size()));
      sh->before_cuda_writes();
      for (size_t i = 0; i < gpu.size(); ++i)
        gpu[i]->store->reduce_device_async(gpu[i]->id, gpu[i]->region, gpu[i]->mode,
                                           DeviceOut{gpu[i]->layer->m_shared->device_ptr(), 0}, keys + 2 * i,
                                           ds.get());
      sh->after_cuda_writes();
      const unsigned* host_keys = ds.fetch_range_keys(int(gpu.size()));
      for (size_t i = 0; i < gpu.size(); ++i) {
        HeatmapLayer& l = *gpu[i]->layer;
        gpu[i]->result.range = range_from_keys(host_keys + 2 * i);
        gpu[i]->result.interop = true;
        l.m_source_shared = true;
        l.m_w = gpu[i]->region.w;
        l.m_h = gpu[i]->region.h;
      }
      return;
    } catch (const std::exception& e) {
      ctx.disable_shared(e.what());  // then the mapped textures below
      for (Job* j : gpu) j->layer->m_shared.reset(), j->layer->m_source_shared = false;
    }
  }
  std::vector<InteropTexture*> texs;
  try {
    for (Job* j : gpu) {
      if (!j->layer->m_interop.attached()) j->layer->m_interop.attach(j->layer->m_values.texture());
      texs.push_back(&j->layer->m_interop);
    }
    DisplayStream& ds = *ctx.stream();
    unsigned* keys = ds.reset_range_keys(int(gpu.size()));
    const std::vector<uint64_t> surfaces = InteropTexture::map_all(texs, ds.get());
    try {
      for (size_t i = 0; i < gpu.size(); ++i)
        gpu[i]->store->reduce_device_async(gpu[i]->id, gpu[i]->region, gpu[i]->mode,
                                           DeviceOut{nullptr, surfaces[i]}, keys + 2 * i, ds.get());
    } catch (...) {
      InteropTexture::unmap_all(texs, ds.get());
      throw;
    }
    // Unmapping orders the CUDA work before any GL work issued after it: drawing reads finished values.
    InteropTexture::unmap_all(texs, ds.get());
    const unsigned* host_keys = ds.fetch_range_keys(int(gpu.size()));
    for (size_t i = 0; i < gpu.size(); ++i) {
      gpu[i]->result.range = range_from_keys(host_keys + 2 * i);
      gpu[i]->result.interop = true;
      gpu[i]->layer->m_source_shared = false;
    }
  } catch (const std::exception& e) {
    ctx.disable(std::string("interop failed, using host memory: ") + e.what());
    for (Job* j : gpu) {
      j->layer->m_interop.detach();
      j->layer->refresh_host(*j->store, j->id, j->region, j->mode, j->result);
    }
  }
}

GLuint HeatmapLayer::paint(const Colormap& map, const ColorParams& p, int out_w, int out_h) {
  if (m_lut_name != map.name) {
    m_lut.upload(map.rgba);
    m_lut_name = map.name;
  }
  if (!m_painter) m_painter = std::make_unique<HeatmapPainter>();
  if (m_source_shared && m_shared) {
    m_shared->before_gl_reads();  // GL waits (on the GPU) for CUDA's writes
    const GLuint tex =
        m_painter->paint(ValueSource{m_shared->texture(), true, m_w, m_h}, m_lut, p, out_w, out_h);
    m_shared->after_gl_reads();  // and CUDA's next writes wait for this draw
    return tex;
  }
  return m_painter->paint(ValueSource{m_values.texture(), false, m_values.width(), m_values.height()}, m_lut,
                          p, out_w, out_h);
}

}  // namespace ts::gfx
