// stb's PNG writer (app/gfx: screenshots, exported panels and figures) and reader (the UI tests read those
// PNGs back), from Debian's libstb-dev headers: their implementations, once, in the tilescope_stb library.
// Always compiled optimised (cmake/Dependencies.cmake): at the sanitizer build's -O0 a 4K PNG took 11 s to
// write instead of 0.6 s, most of the longest sanitizer test's 90 s
// (Snapshot.EveryPanelFitsAtEveryScreenSize).
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
