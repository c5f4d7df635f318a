#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "npy.hpp"
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
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.npy.part")));
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
