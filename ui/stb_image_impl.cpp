// stb_image's implementation (Debian's libstb-dev headers): the UI tests read the PNGs the window writes
// back.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
