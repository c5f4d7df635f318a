#pragma once
// [SECTION] NumPy .npy files: 2-D float32 matrices in and out.
// Reads what numpy itself reads, for the one dtype we need: format versions 1.0, 2.0 and 3.0 (no other minor
// version); a header of at most 10000 bytes (numpy's own limit) holding a Python dict literal with exactly
// the keys 'descr', 'fortran_order' and 'shape'; dtype float32 in either byte order; C order, or Fortran
// order (converted to C order). The header is parsed by a small hand-written scanner: one pass, no recursion,
// no regular expression. Everything else is refused with a ValidationError that names the file and the
// reason: a header numpy would reject (unquoted dtypes, `TrueFalse`, `(2 3)`, `(2,,3)`, duplicate or unknown
// keys), negative or zero dimensions, other dtypes, not 2-D, and data bytes missing or left over. Shapes and
// sizes are checked from the header before any data is read or memory allocated.
#include <cstdint>
#include <string>

#include "core/io/files.hpp"
#include "core/engine/matrix.hpp"

namespace ts {

// The header's promise, checked against the file's size.
struct NpyHeader {
  int64_t rows = 0, cols = 0;
  bool fortran_order = false;
  bool big_endian = false;
  uint64_t data_offset = 0;  // bytes before the data
  uint64_t data_bytes = 0;   // rows * cols * 4, which is exactly what follows the header
};

// The largest dimension a .npy file may declare (the reader's own limit; a backend checks what it can run).
inline constexpr int64_t kMaxNpyDim = int64_t(1) << 17;

// numpy refuses headers longer than this unless told to trust the file (numpy.lib.format, max_header_size).
inline constexpr size_t kNpyMaxHeader = 10000;

// Parses the preamble and header of a .npy from its first bytes (`n` of them: at least the whole header, or
// the whole file) and checks them against `file_size`. `name` prefixes every message.
NpyHeader parse_npy_header(const unsigned char* bytes, size_t n, uint64_t file_size, const std::string& name);

// Reads only the header of the regular file `path` (anything else is refused before it is read).
NpyHeader read_npy_header(const std::string& path);

// Reads the matrix; checks the header and the host memory it needs before reading any data.
HostMatrix read_npy(const std::string& path);

// The same from a whole file held in memory (tests, the fuzz target).
HostMatrix decode_npy(const unsigned char* bytes, size_t n, const std::string& name);

// Writes a version 1.0 .npy ('<f4', C order) through the program's one writer (files.hpp): a unique
// temporary file in the same folder, flushed and checked, then renamed. Replace::Never refuses an existing
// file; --force (Replace::RegularFile) replaces a regular file only. Throws std::runtime_error on I/O errors.
void write_npy(const std::string& path, const HostMatrix& m, Replace replace = Replace::Never);

}  // namespace ts
