#pragma once
// [SECTION] NumPy .npy files: 2-D float32 matrices in and out.
// Reads format versions 1.0, 2.0 and 3.0; dtype float32 in either byte order; C order, or Fortran order which
// is converted to C order. Anything else (other dtypes, not 2-D, bad magic, a header that does not parse,
// missing or extra data bytes) is refused with a ValidationError that names the file and what is wrong.
#include <string>

#include "matrix.hpp"

namespace ts {

HostMatrix read_npy(const std::string& path);

// Writes a version 1.0 .npy ('<f4', C order). The data goes to a temporary file in the same folder which then
// replaces `path`, so a failed write never leaves a half-written file behind. Throws std::runtime_error on
// I/O errors. Callers decide whether an existing `path` may be replaced.
void write_npy(const std::string& path, const HostMatrix& m);

}  // namespace ts
