#version 330 core
// Colours a heatmap: each target pixel finds the matrix element under it, the view value that summarises that
// element's block (the same integer block boundaries as lod_begin() in app/core/heatmap.hpp), and maps it through
// a 256-entry colormap table with exactly the arithmetic of colormap_index() on the CPU. Zoomed in far enough,
// the tile grid of the kernel (the output block each thread block computes) is drawn over it, faintly.
#ifdef TS_VALUES_BUFFER
uniform samplerBuffer u_values;  // R32F texture buffer (memory shared with CUDA): u_view.y rows of u_view.x
#else
uniform sampler2D u_values;  // R32F, u_view.x x u_view.y values; texel row 0 = first row of the region
#endif
uniform sampler2D u_lut;     // 256 x 1 RGBA8 colormap
uniform vec2 u_range;        // lo, hi of the colour scale
uniform ivec2 u_extent;      // the region's (cols, rows) in elements
uniform ivec2 u_view;        // values (w, h)
uniform ivec2 u_target;      // this target's size in pixels
uniform vec2 u_origin;       // the region's first (col, row) in the matrix
uniform ivec2 u_tile;        // grid: (tile_n, tile_m) elements; 0 = no grid
uniform float u_grid_weight; // how far a grid pixel moves toward black (on a light colour) or white (on a dark one)
out vec4 o_color;

float value_at(ivec2 v) {
#ifdef TS_VALUES_BUFFER
  return texelFetch(u_values, v.y * u_view.x + v.x).r;
#else
  return texelFetch(u_values, v, 0).r;
#endif
}

int view_index(int e, int extent, int n) {
  // The view value whose block [i * extent / n, (i + 1) * extent / n) holds element e (relative to the region).
  return ((e + 1) * n - 1) / extent;
}

bool crosses(float a, float b, int tile) {  // a multiple of `tile` lies in (a, b]
  return tile > 0 && floor(b / float(tile)) != floor(a / float(tile));
}

void main() {
  vec2 px = gl_FragCoord.xy;  // pixel centre; y = 0 is the region's first row
  vec2 scale = vec2(u_extent) / vec2(u_target);
  // The element under the pixel centre, in exact integer arithmetic ((2p + 1) / 2 * extent / target), so the CPU
  // reference picks the same element even when a centre falls on an element boundary.
  uvec2 p = uvec2(px);
  ivec2 e = min(ivec2((2u * p + 1u) * uvec2(u_extent) / (2u * uvec2(u_target))), u_extent - 1);
  ivec2 v = ivec2(view_index(e.x, u_extent.x, u_view.x), view_index(e.y, u_extent.y, u_view.y));
  float x = value_at(v);
  vec4 c;
  if (isnan(x) || isinf(x)) {
    c = vec4(1.0, 0.0, 1.0, 1.0);  // NaN / Inf: magenta, whatever the map
  } else {
    float t = (x - u_range.x) / (u_range.y - u_range.x);
    int i = clamp(int(floor(t * 256.0)), 0, 255);
    c = texelFetch(u_lut, ivec2(i, 0), 0);
  }
  // Grid lines: where a tile boundary falls inside this pixel (element coordinates of its two edges). A line
  // tints the data under it toward white or black, whichever contrasts with it, by only u_grid_weight: it is
  // seen on any colour and never looks like data.
  vec2 lo = u_origin + (px - 0.5) * scale, hi = u_origin + (px + 0.5) * scale;
  if (crosses(lo.x, hi.x, u_tile.x) || crosses(lo.y, hi.y, u_tile.y)) {
    vec3 ink = dot(c.rgb, vec3(0.2126, 0.7152, 0.0722)) > 0.5 ? vec3(0.0) : vec3(1.0);
    c.rgb = mix(c.rgb, ink, u_grid_weight);
  }
  o_color = c;
}
