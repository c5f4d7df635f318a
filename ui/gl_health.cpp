#include "ui/gl_health.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <imgui_impl_opengl3.h>

#include "gfx/gl.hpp"
#include "gfx/heatmap_set.hpp"
#include "gfx/texture.hpp"
#include "ui/theme.hpp"
#include "gfx/window.hpp"

namespace ts::ui {

namespace {

// The glyphs every panel needs: letters of the labels, every digit, the units' symbols.
constexpr const char* kGlyphLine = "Shape M x N x K = 0123456789 TFLOP/s ms % [row, col] PASS";
constexpr int kMargin = 2;

// [SECTION] The CPU's picture of a line of text, from the font atlas's own pixels: each glyph quad of the
// draw list is filled the way GL fills it (pixel centres inside the quad, texture coordinates interpolated
// across it, the atlas sampled bilinearly as ImGui's backend sets it up, alpha blended over black).
float atlas_alpha(const ImTextureData& t, int x, int y) {
  x = std::clamp(x, 0, t.Width - 1);
  y = std::clamp(y, 0, t.Height - 1);
  const unsigned char* p = t.Pixels + (size_t(y) * size_t(t.Width) + size_t(x)) * size_t(t.BytesPerPixel);
  return t.BytesPerPixel == 4 ? p[3] / 255.0f : p[0] / 255.0f;
}

float sample(const ImTextureData& t, float u, float v) {
  const float tx = u * float(t.Width) - 0.5f, ty = v * float(t.Height) - 0.5f;
  const int x0 = int(std::floor(tx)), y0 = int(std::floor(ty));
  const float fx = tx - float(x0), fy = ty - float(y0);
  const float a = atlas_alpha(t, x0, y0) * (1 - fx) + atlas_alpha(t, x0 + 1, y0) * fx;
  const float b = atlas_alpha(t, x0, y0 + 1) * (1 - fx) + atlas_alpha(t, x0 + 1, y0 + 1) * fx;
  return a * (1 - fy) + b * fy;
}

// Grey levels (0..255) of the text quads in vertices [first, end) of `dl`, on a w x h black picture.
std::vector<float> raster_text(const ImDrawList& dl, int first, const ImTextureData& atlas, int w, int h) {
  std::vector<float> out(size_t(w) * size_t(h), 0.0f);
  for (int q = first; q + 3 < dl.VtxBuffer.Size; q += 4) {
    const ImDrawVert& a = dl.VtxBuffer[q];      // top left
    const ImDrawVert& c = dl.VtxBuffer[q + 2];  // bottom right
    if (c.pos.x <= a.pos.x || c.pos.y <= a.pos.y) continue;
    const int x_begin = std::max(0, int(std::floor(a.pos.x))), x_end = std::min(w, int(std::ceil(c.pos.x)));
    const int y_begin = std::max(0, int(std::floor(a.pos.y))), y_end = std::min(h, int(std::ceil(c.pos.y)));
    for (int y = y_begin; y < y_end; ++y)
      for (int x = x_begin; x < x_end; ++x) {
        const float cx = float(x) + 0.5f, cy = float(y) + 0.5f;
        if (cx < a.pos.x || cx >= c.pos.x || cy < a.pos.y || cy >= c.pos.y) continue;
        const float u = a.uv.x + (cx - a.pos.x) / (c.pos.x - a.pos.x) * (c.uv.x - a.uv.x);
        const float v = a.uv.y + (cy - a.pos.y) / (c.pos.y - a.pos.y) * (c.uv.y - a.uv.y);
        const float alpha = sample(atlas, u, v);
        float& dst = out[size_t(y) * size_t(w) + size_t(x)];
        dst = 255.0f * alpha + dst * (1 - alpha);
      }
  }
  return out;
}

// GlDamage::Glyphs: the font atlas in GL memory wiped once, as the broken driver lost it (ImGui re-uploads it
// only when the renderer's textures are made anew).
void damage_glyphs(const ImTextureData& atlas) {
  const GLuint tex = GLuint(intptr_t(atlas.TexID));
  if (gfx::simulated_gl_damage() != gfx::GlDamage::Glyphs || !tex) return;
  gfx::simulate_gl_damage(
      gfx::GlDamage::None);  // once: the wiped atlas stays wiped until it is uploaded again
  std::vector<unsigned char> zeros(size_t(atlas.Width) * size_t(atlas.Height) * 4, 0);
  GLint prev = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev);
  glBindTexture(GL_TEXTURE_2D, tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, atlas.Width, atlas.Height, GL_RGBA, GL_UNSIGNED_BYTE, zeros.data());
  glBindTexture(GL_TEXTURE_2D, GLuint(prev));
}

}  // namespace

std::string gl_damage_advice() {
  return "OpenGL on this GPU no longer draws what it is told, so every picture TileScope draws may be wrong: "
         "the heatmaps, the plots, the tile schedule, screenshots and exported PNGs; text may lose letters. "
         "The numbers do not go through OpenGL and stay right: PASS or FAIL, the errors, the times, the CSV "
         "and JSON exports and the saved session. On NVIDIA GPUs this follows a kernel that faulted (an "
         "illegal memory access): the driver loses the OpenGL contexts open at that moment, and from then on "
         "those of every program that also uses CUDA on that GPU, as TileScope's GPU backend does (a new "
         "program that uses OpenGL alone still draws right). To get the pictures back, close the programs "
         "that use the GPU and reset it (as root: "
         "nvidia-smi --gpu-reset -i <gpu>), or reboot; on a shared server, ask its administrator. To keep it "
         "from happening, let each new build of your kernel run under compute-sanitizer first: 'Check each "
         "new "
         "build under compute-sanitizer first' in the Your kernel panel, on unless you turned it off (on the "
         "command line: unless you pass --no-guard).";
}

GlSelfCheck run_gl_self_check(gfx::HeatmapSet* heatmaps, const MatrixStore* probe) {
  const auto t0 = std::chrono::steady_clock::now();
  GlSelfCheck r;
  auto done = [&] {
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  r.robustness = gfx::context_robustness();
  r.reset = gfx::reset_status();
  r.detail = "context: " +
             std::string(!r.robustness.known               ? "already lost"
                         : r.robustness.reset_notification ? "reset notification on"
                         : r.robustness.available          ? "robust, without reset notification"
                                                           : "not robust") +
             "; reset status: " + gfx::to_string(r.reset);
  bool lost_before = false;
  gfx::take_gl_errors(&lost_before);  // a context lost earlier says GL_CONTEXT_LOST at every call
  if (lost_before || (r.reset != gfx::ResetStatus::None && r.reset != gfx::ResetStatus::NotAvailable)) {
    r.context_lost = true;
    // Unknown also stands for a context found lost earlier: then GL_CONTEXT_LOST says it better.
    const bool reported = r.reset == gfx::ResetStatus::Guilty || r.reset == gfx::ResetStatus::Innocent;
    r.verdict = reported ? std::string("the driver reset the OpenGL context (") + gfx::to_string(r.reset) +
                               "): everything it held is gone"
                         : std::string("the OpenGL context is lost (GL_CONTEXT_LOST): the driver reset it");
    return done();
  }

  GLint prev_fbo = 0, prev_viewport[4] = {0, 0, 0, 0};
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &prev_fbo);
  glGetIntegerv(GL_VIEWPORT, prev_viewport);
  auto restore = [&] {
    if (!gfx::gl_usable()) return;
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prev_fbo));
    glViewport(prev_viewport[0], prev_viewport[1], prev_viewport[2], prev_viewport[3]);
  };
  bool lost = false;
  try {
    // 1. A known heatmap through the heatmap path: through host memory, and where the window's heatmaps take
    //    CUDA-GL interop, through interop too (CUDA writes the values into GL's memory).
    gfx::HeatmapPatternCheck pattern;
    std::string why_pattern;
    r.pattern_ok = pattern.run(&why_pattern, &lost);
    r.detail += "; heatmap path through host memory: " + (r.pattern_ok ? std::string("right") : why_pattern);
    if (lost) throw std::runtime_error("the context was lost while it drew");  // no further GL call on it
    if (heatmaps && heatmaps->interop().on) {
      r.interop_checked = true;
      if (!probe) {
        r.detail += "; through CUDA-GL interop: the known picture could not be put on the GPU";
      } else {
        gfx::HeatmapPatternCheck via;
        std::string why_interop;
        r.interop_ok = via.run(&why_interop, &lost, &heatmaps->context(), probe) && via.interop();
        if (lost) throw std::runtime_error("the context was lost while it drew through interop");
        r.detail += "; through CUDA-GL interop: " +
                    (r.interop_ok     ? std::string("right")
                     : !via.interop() ? "interop failed and is off now (" + heatmaps->interop().why + ")"
                                      : why_interop);
      }
    }

    // 2. That heatmap and a line of glyphs through the window's own renderer.
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    ImFontAtlas* atlas = font->OwnerAtlas;
    const ImVec2 text_size = font->CalcTextSizeA(size, 1e9f, 0.0f, kGlyphLine);
    const int pw = gfx::HeatmapPatternCheck::kCols, ph = gfx::HeatmapPatternCheck::kRows;
    const int text_y = kMargin + ph + kMargin;
    const int w = std::max(pw, int(std::ceil(text_size.x))) + 2 * kMargin;
    const int h = text_y + int(std::ceil(text_size.y)) + kMargin;
    ImDrawList dl(ImGui::GetDrawListSharedData());
    dl._ResetForNewFrame();
    dl.PushClipRect(ImVec2(0, 0), ImVec2(float(w), float(h)));
    dl.PushTexture(atlas->TexRef);
    dl.AddImage(ImTextureRef(ImTextureID(intptr_t(pattern.texture()))), ImVec2(kMargin, kMargin),
                ImVec2(float(kMargin + pw), float(kMargin + ph)));
    const int first_text = dl.VtxBuffer.Size;
    dl.AddText(font, size, ImVec2(kMargin, float(text_y)), IM_COL32_WHITE, kGlyphLine);
    ImDrawData dd;
    dd.Valid = true;
    dd.DisplayPos = ImVec2(0, 0);
    dd.DisplaySize = ImVec2(float(w), float(h));
    dd.FramebufferScale = ImVec2(1, 1);
    // The textures to upload first where new or changed: the platform's list, and the font atlas's, which in
    // a context's first frame is not in that list yet.
    ImVector<ImTextureData*> textures = ImGui::GetPlatformIO().Textures;
    if (!textures.contains(atlas->TexData)) textures.push_back(atlas->TexData);
    for (ImTextureData* t : textures)
      if (t->Status != ImTextureStatus_OK) ImGui_ImplOpenGL3_UpdateTexture(t);
    damage_glyphs(*atlas->TexData);
    dd.AddDrawList(&dl);
    gfx::Framebuffer fbo(w, h);
    fbo.bind();
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(&dd);
    glFinish();
    std::vector<uint8_t> got = fbo.read_rgba();
    restore();
    gfx::damage_readback(got);

    // The heatmap drawn through ImGui: the same pixels as the CPU colouring, exactly.
    std::vector<uint8_t> got_img(size_t(pw) * ph * 4);
    for (int y = 0; y < ph; ++y)
      std::copy_n(&got[(size_t(kMargin + y) * size_t(w) + kMargin) * 4], size_t(pw) * 4,
                  &got_img[size_t(y) * size_t(pw) * 4]);
    const gfx::ImageDiff img = gfx::compare_rgba(got_img, pattern.expected(), pw, ph, 2);
    // The glyphs: their ink where the atlas puts it. Sampling may round differently by a few levels; a
    // missing, shifted or smeared glyph differs by far more over its ink.
    const std::vector<float> want = raster_text(dl, first_text, *atlas->TexData, w, h);
    int64_t ink = 0, bad = 0, got_ink = 0;
    for (int y = text_y; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float e = want[size_t(y) * size_t(w) + size_t(x)];
        const uint8_t* p = &got[(size_t(y) * size_t(w) + size_t(x)) * 4];
        const int g = std::max({int(p[0]), int(p[1]), int(p[2])});
        ink += e > 128;
        got_ink += g > 128;
        bad += std::abs(float(g) - e) > 64 || std::abs(int(p[0]) - int(p[2])) > 64;
      }
    r.glyphs_ok = img.differing == 0 && ink > 0 && bad <= std::max<int64_t>(4, ink / 20);
    char t[200];
    std::snprintf(
        t, sizeof t,
        "; window renderer: heatmap %lld of %d pixels wrong, text %lld of %lld ink pixels wrong (%lld "
        "drawn)",
        static_cast<long long>(img.differing), pw * ph, static_cast<long long>(bad),
        static_cast<long long>(ink), static_cast<long long>(got_ink));
    r.detail += t;
    if (!img.first.empty()) r.detail += " (" + img.first + ")";
    gfx::take_gl_errors(&lost);
  } catch (const std::exception& e) {
    restore();
    r.detail += std::string("; the check could not draw: ") + e.what();
  }
  // A reset that happened while the check drew (GL_CONTEXT_LOST above, or the status now).
  r.context_lost = lost;
  if (const gfx::ResetStatus after = gfx::reset_status();
      after != gfx::ResetStatus::None && after != gfx::ResetStatus::NotAvailable) {
    r.reset = after;
    r.context_lost = true;
  }
  if (r.context_lost) r.detail += "; GL says its context is lost";
  r.ok = r.pattern_ok && r.glyphs_ok && (!r.interop_checked || r.interop_ok) && !r.context_lost;
  r.verdict = r.ok             ? "OpenGL draws a known heatmap and a line of text exactly as expected"
              : r.context_lost ? "the OpenGL context was lost while the check drew (the driver reset it)"
              : !r.pattern_ok && !r.glyphs_ok ? "OpenGL drew a known heatmap and a line of text wrong"
              : !r.pattern_ok                 ? "OpenGL drew a known heatmap wrong"
              : !r.glyphs_ok ? "OpenGL drew a known line of text (or the heatmap beside it) wrong"
                             : "CUDA-GL interop drew a known heatmap wrong (through host memory it is right)";
  return done();
}

GlSelfCheck run_gl_self_check_frame(ImVec2 display, gfx::HeatmapSet* heatmaps, const MatrixStore* probe) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = display;
  io.DisplayFramebufferScale = ImVec2(1, 1);
  io.DeltaTime = 1.0f / 60;
  ImGui::NewFrame();
  GlSelfCheck r = run_gl_self_check(heatmaps, probe);
  ImGui::EndFrame();
  return r;
}

void require_gl_ok(const std::string& what, ImVec2 display) {
  const GlSelfCheck r = run_gl_self_check_frame(display);
  if (r.ok) return;
  throw GlDamagedError(what + " not written: OpenGL failed its self-check, so the picture would be wrong: " +
                       r.verdict + " (" + r.detail + "). " + gl_damage_advice());
}

GlCheckHost::GlCheckHost(gfx::GlChoice choice, std::shared_ptr<Backend> backend)
    : m_backend(std::move(backend)),
      m_gl(gfx::make_headless_gl(choice, m_backend ? m_backend->cuda_device() : -1, 64, 64)) {
  IMGUI_CHECKVERSION();
  m_ctx = ImGui::CreateContext();
  ImGui::SetCurrentContext(m_ctx);
  ImGui::GetIO().IniFilename = nullptr;
  load_fonts();
  ImGui_ImplOpenGL3_Init("#version 330 core");
  if (m_backend && m_backend->cuda_device() >= 0) {
    m_heatmaps = std::make_unique<gfx::HeatmapSet>(m_backend->cuda_device());
    if (m_heatmaps->interop().on) try {
        m_probe = m_backend->probe_store(gfx::HeatmapPatternCheck::pattern());
      } catch (const std::exception& e) {
        m_probe_error = e.what();
      }
  }
}

GlCheckHost::~GlCheckHost() {
  m_heatmaps.reset();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext(m_ctx);
}

GlSelfCheck GlCheckHost::check() {
  GlSelfCheck r = run_gl_self_check_frame(ImVec2(640, 360), m_heatmaps.get(), m_probe.get());
  if (!m_probe_error.empty())
    r.detail += " (the known picture could not be put on the GPU: " + m_probe_error + ")";
  return r;
}

std::string GlCheckHost::heatmap_path() const {
  if (!m_heatmaps) return "host path (no GPU backend)";
  return m_heatmaps->interop().on ? "CUDA-GL interop" : "host path (" + m_heatmaps->interop().why + ")";
}

}  // namespace ts::ui
