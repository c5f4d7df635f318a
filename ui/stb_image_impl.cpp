// stb_image's implementation (Debian's libstb-dev headers), for the file dialog's image previews.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
