#pragma once
// [SECTION] Mangled names as the build-time generators (resource_gen.cpp, sass_gen.cpp) compare them.
#include <cctype>
#include <string>

namespace ts {

// GCC marks internal-linkage names with 'L' before the length of the name in host symbols ("...L4kernI...")
// where the device name has none; an 'L' followed by a digit never occurs otherwise in a mangled name.
inline std::string normalize_mangled(const std::string& mangled) {
  std::string out;
  for (size_t i = 0; i < mangled.size(); ++i)
    if (!(mangled[i] == 'L' && i + 1 < mangled.size() &&
          std::isdigit(static_cast<unsigned char>(mangled[i + 1]))))
      out += mangled[i];
  return out;
}

}  // namespace ts
