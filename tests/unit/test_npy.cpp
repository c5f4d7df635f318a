#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>

#include <gtest/gtest.h>

#include "core/io/npy.hpp"
#include "test_util.hpp"

using namespace ts;

namespace {

// Writes a .npy by hand: a header dict and raw bytes, to test what numpy (or a broken writer) produces.
void write_raw(const std::string& path, const std::string& dict, const void* data, size_t bytes,
               int major = 1) {
  std::string header = dict;
  const size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY", 6);
  f.put(char(major));
  f.put(0);
  const uint32_t len = uint32_t(header.size());
  f.put(char(len & 0xff));
  f.put(char((len >> 8) & 0xff));
  if (major != 1) {
    f.put(char((len >> 16) & 0xff));
    f.put(char((len >> 24) & 0xff));
  }
  f << header;
  f.write(static_cast<const char*>(data), std::streamsize(bytes));
}

std::string error_of(const std::string& path) {
  try {
    read_npy(path);
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(Npy, RoundTripKeepsShapeAndBits) {
  test::TempDir dir;
  HostMatrix m(3, 5);
  for (size_t i = 0; i < m.size(); ++i) m.data[i] = float(i) * 0.25f - 1.0f;
  m.data[7] = -0.0f;
  write_npy(dir.file("m.npy"), m);
  HostMatrix r = read_npy(dir.file("m.npy"));
  EXPECT_EQ(r.rows, 3);
  EXPECT_EQ(r.cols, 5);
  EXPECT_EQ(0, std::memcmp(r.data.data(), m.data.data(), m.size() * 4));
  // The header is 64-byte aligned as numpy writes it.
  EXPECT_EQ(std::filesystem::file_size(dir.file("m.npy")) % 4, 0u);
  // Written through a temporary file that is gone afterwards.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST(Npy, FortranOrderIsConvertedToCOrder) {
  test::TempDir dir;
  const float colmajor[6] = {1, 4, 2, 5, 3, 6};  // [[1,2,3],[4,5,6]] stored column by column
  write_raw(dir.file("f.npy"), "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", colmajor, 24);
  HostMatrix r = read_npy(dir.file("f.npy"));
  ASSERT_EQ(r.rows, 2);
  ASSERT_EQ(r.cols, 3);
  EXPECT_EQ(r.data, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, ReadsVersion2AndBigEndian) {
  test::TempDir dir;
  const float v[2] = {1.5f, -2.0f};
  write_raw(dir.file("v2.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", v, 8, 2);
  EXPECT_EQ(read_npy(dir.file("v2.npy")).data, (std::vector<float>{1.5f, -2.0f}));
  uint32_t be[2];
  std::memcpy(be, v, 8);
  for (auto& u : be) u = __builtin_bswap32(u);
  write_raw(dir.file("be.npy"), "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 1), }", be, 8);
  HostMatrix r = read_npy(dir.file("be.npy"));
  EXPECT_EQ(r.rows, 2);
  EXPECT_EQ(r.data, (std::vector<float>{1.5f, -2.0f}));
}

TEST(Npy, RefusesWhatIsNotA2DFloat32Matrix) {
  test::TempDir dir;
  const double d[4] = {1, 2, 3, 4};
  write_raw(dir.file("f8.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", d, 32);
  EXPECT_NE(error_of(dir.file("f8.npy")).find("dtype '<f8' is not float32"), std::string::npos);
  const float f[8] = {};
  write_raw(dir.file("1d.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", f, 32);
  EXPECT_NE(error_of(dir.file("1d.npy")).find("1-D"), std::string::npos);
  write_raw(dir.file("3d.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", f, 32);
  EXPECT_NE(error_of(dir.file("3d.npy")).find("3-D"), std::string::npos);
  write_raw(dir.file("empty.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2), }", f, 0);
  EXPECT_NE(error_of(dir.file("empty.npy")).find("empty"), std::string::npos);
}

TEST(Npy, RefusesCorruptAndTruncatedFiles) {
  test::TempDir dir;
  HostMatrix m(4, 4);
  write_npy(dir.file("ok.npy"), m);
  const auto size = std::filesystem::file_size(dir.file("ok.npy"));
  // Truncated data.
  std::filesystem::copy_file(dir.file("ok.npy"), dir.file("trunc.npy"));
  std::filesystem::resize_file(dir.file("trunc.npy"), size - 5);
  EXPECT_NE(error_of(dir.file("trunc.npy")).find("truncated"), std::string::npos);
  // Truncated inside the header.
  std::filesystem::copy_file(dir.file("ok.npy"), dir.file("hdr.npy"));
  std::filesystem::resize_file(dir.file("hdr.npy"), 20);
  EXPECT_NE(error_of(dir.file("hdr.npy")).find("truncated"), std::string::npos);
  // Extra bytes after the data.
  std::filesystem::copy_file(dir.file("ok.npy"), dir.file("extra.npy"));
  { std::ofstream(dir.file("extra.npy"), std::ios::app | std::ios::binary) << "junk"; }
  EXPECT_NE(error_of(dir.file("extra.npy")).find("corrupt"), std::string::npos);
  // Not a .npy at all, empty, missing.
  { std::ofstream(dir.file("text.npy")) << "hello, this is not numpy"; }
  EXPECT_NE(error_of(dir.file("text.npy")).find("magic"), std::string::npos);
  { std::ofstream(dir.file("zero.npy")); }
  EXPECT_NE(error_of(dir.file("zero.npy")).find("too short"), std::string::npos);
  EXPECT_NE(error_of(dir.file("missing.npy")).find("cannot open"), std::string::npos);
  // A header without a shape.
  const float f[1] = {};
  write_raw(dir.file("noshape.npy"), "{'descr': '<f4', 'fortran_order': False, }", f, 4);
  EXPECT_NE(error_of(dir.file("noshape.npy")).find("'shape'"), std::string::npos);
}

// [SECTION] The generated corpus (tests/npy/make_corpus.py): valid files in every version and several hundred
// malformed ones, each read or refused with its reason, from a file and from memory alike.
namespace {
struct CorpusEntry {
  std::string file, expect, detail;
};

std::vector<CorpusEntry> corpus() {
  std::vector<CorpusEntry> out;
  std::ifstream f(std::string(TILESCOPE_NPY_CORPUS) + "/manifest.tsv");
  std::string line;
  while (std::getline(f, line)) {
    CorpusEntry e;
    const size_t t1 = line.find('\t');
    e.file = std::string(TILESCOPE_NPY_CORPUS) + "/" + line.substr(0, t1);
    const std::string rest = line.substr(t1 + 1);
    const size_t t2 = rest.find('\t');
    e.expect = rest.substr(0, t2);
    e.detail = t2 == std::string::npos ? "" : rest.substr(t2 + 1);
    out.push_back(e);
  }
  return out;
}

std::string outcome(const std::function<HostMatrix()>& read, HostMatrix* m) {
  try {
    *m = read();
    return "";
  } catch (const ValidationError& e) {
    return e.what();
  }
}
}  // namespace

TEST(NpyCorpus, EveryFileIsReadOrRefusedWithItsReason) {
  const auto entries = corpus();
  ASSERT_GT(entries.size(), 300u) << "corpus missing at " << TILESCOPE_NPY_CORPUS;
  size_t valid = 0;
  for (const auto& e : entries) {
    SCOPED_TRACE(e.file);
    std::ifstream in(e.file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    HostMatrix from_file, from_memory;
    const std::string why = outcome([&] { return read_npy(e.file); }, &from_file);
    const std::string why_mem = outcome(
        [&] {
          return decode_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), e.file);
        },
        &from_memory);
    EXPECT_EQ(why, why_mem) << "the file and the in-memory reader disagree";
    if (e.expect == "refuse") {
      EXPECT_NE(why, "") << "accepted, but numpy's rules refuse it (" << e.detail << ")";
      EXPECT_NE(why.find(e.detail), std::string::npos) << "message: " << why << "\nwanted: " << e.detail;
      EXPECT_EQ(why.rfind(e.file + ":", 0), 0u) << "the message names the file: " << why;
      EXPECT_LT(why.size(), 400u) << "a message that long repeats the file: " << why.substr(0, 400);
      continue;
    }
    ++valid;
    ASSERT_EQ(why, "");
    int64_t rows = 0, cols = 0;
    ASSERT_EQ(std::sscanf(e.expect.c_str(), "ok %lld %lld", (long long*)&rows, (long long*)&cols), 2);
    ASSERT_EQ(from_file.rows, rows);
    ASSERT_EQ(from_file.cols, cols);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(from_file.at(r, c), float(r * cols + c) / 4 - 3) << r << "," << c;
    EXPECT_EQ(from_memory.data, from_file.data);
    const NpyHeader h = read_npy_header(e.file);
    EXPECT_EQ(h.rows, rows);
    EXPECT_EQ(h.cols, cols);
  }
  EXPECT_GE(valid, 40u);
}

TEST(Npy, OnlyRegularFilesAreReadAndAFifoNeverBlocks) {
  test::TempDir dir;
  const std::string fifo = dir.file("pipe.npy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of(fifo).find("is a FIFO (named pipe); only regular files are read"), std::string::npos);
  EXPECT_NE(error_of(dir.path().string()).find("is a folder"), std::string::npos);
  EXPECT_NE(error_of("/dev/zero").find("is a character device"), std::string::npos);
  std::filesystem::create_symlink("loop.npy", dir.file("loop.npy"));
  EXPECT_NE(error_of(dir.file("loop.npy")).find("cannot open"), std::string::npos);
}

TEST(Npy, SizesComeFromTheHeaderBeforeAnyDataIsRead) {
  test::TempDir dir;
  // A sparse 131072 x 131072 file: 64 GiB as far as its size goes, a few KiB on disk.
  const std::string big = dir.file("big.npy");
  write_raw(big, "{'descr': '<f4', 'fortran_order': False, 'shape': (131072, 131072), }", nullptr, 0);
  const auto header = std::filesystem::file_size(big);
  std::filesystem::resize_file(big, header + (uint64_t(131072) * 131072 * 4));
  const NpyHeader h = read_npy_header(big);
  EXPECT_EQ(h.rows, 131072);
  EXPECT_EQ(h.data_bytes, uint64_t(1) << 36);
  EXPECT_EQ(h.data_offset, header);
  // Reading it is refused for the memory it needs, not attempted (no std::bad_alloc).
  if (available_host_memory() < (uint64_t(1) << 36))
    EXPECT_NE(error_of(big).find("of host memory, but only"), std::string::npos) << error_of(big);
}

TEST(Npy, WritingNeverReplacesWithoutBeingAskedAndForceReplacesRegularFilesOnly) {
  test::TempDir dir;
  HostMatrix m(2, 2);
  const std::string path = dir.file("m.npy");
  { std::ofstream(path) << "precious"; }
  EXPECT_THROW(write_npy(path, m), ValidationError);
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  write_npy(path, m, Replace::RegularFile);
  EXPECT_EQ(read_npy(path).rows, 2);
  const std::string link = dir.file("link.npy");
  std::filesystem::create_symlink(path, link);
  EXPECT_THROW(write_npy(link, m, Replace::RegularFile), ValidationError);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  // Nothing but the files named is left in the folder: no temporary.
  size_t files = 0;
  for (auto it = std::filesystem::directory_iterator(dir.path()); it != std::filesystem::directory_iterator();
       ++it)
    ++files;
  EXPECT_EQ(files, 2u);
}
