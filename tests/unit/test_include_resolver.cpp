// What a person's kernel file may include (issue 26, item 4): headers of its own folder are read by TileScope
// and handed to NVRTC in memory; absolute names, '..', computed names, links out of the folder, FIFOs and
// folders are refused with their line; nothing else of the disk is read.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "core/user_kernel/include_resolver.hpp"
#include "core/user_kernel/kernel_source.hpp"
#include "core/engine/problem.hpp"
#include "test_util.hpp"

using namespace ts;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// The message of the refusal of `text` as the kernel file `kernel` (empty when it is not refused).
std::string refusal(const std::string& text, const std::string& kernel) {
  try {
    resolve_includes(text, kernel, kernel);
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IncludeDirectives, AreFoundHoweverTheyAreSpelled) {
  const std::string text =
      "#include \"a.h\"\n"                   // 1
      "  #  include <cuda_fp16.h>\n"         // 2
      "/* c */ # /* c */ include \"b.h\"\n"  // 3
      "%:include \"c.h\"\n"                  // 4: a digraph
      "#inc\\\nlude \"d.h\"\n"               // 5-6: spliced
      "#include_next <e.h>\r\n"              // 7: CRLF
      "#include MACRO\r"                     // 8: CR only
      "#if __has_include(\"f.h\")\n"         // 9
      "// see the #include lines above\n"    // 10: prose, not a directive
      "int x; #include \"g.h\"\n";           // 11: not a directive, but its name is checked
  const auto d = find_include_directives(text);
  using K = IncludeDirective::Kind;
  const IncludeDirective expected[] = {
      {1, K::Quoted, "a.h", "include"},     {2, K::Angled, "cuda_fp16.h", "include"},
      {3, K::Quoted, "b.h", "include"},     {4, K::Quoted, "c.h", "include"},
      {5, K::Quoted, "d.h", "include"},     {7, K::Angled, "e.h", "include_next"},
      {8, K::Computed, "MACRO", "include"}, {9, K::Quoted, "f.h", "__has_include"},
      {11, K::Quoted, "g.h", "include"},
  };
  ASSERT_EQ(d.size(), std::size(expected));
  for (size_t i = 0; i < d.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(d[i].line, expected[i].line);
    EXPECT_EQ(int(d[i].kind), int(expected[i].kind));
    EXPECT_EQ(d[i].name, expected[i].name);
    EXPECT_EQ(d[i].keyword, expected[i].keyword);
  }
}

TEST(IncludeDirectives, TheSearchesLookAtEachCharacterABoundedNumberOfTimes) {
  // Inputs that made naive searches quadratic: many names opened on one line and never closed, many `#`
  // inside one comment, long runs of blanks, identifiers and quotes. The characters the searches look at
  // are counted (not timed) and must stay under 8 per character of input, at 10x the size too.
  auto hostile = [](int n) {
    std::vector<std::string> v;
    std::string s;
    for (int i = 0; i < n; ++i) s += "#include <";
    v.push_back(s);
    s.clear();
    for (int i = 0; i < n; ++i) s += "#include \"";
    v.push_back(s);
    v.push_back("# /*" + std::string(size_t(n), '#') + "*/ include \"x.h\"");
    s = "/*";
    for (int i = 0; i < n; ++i) s += "#/*";
    v.push_back(s + "*/");
    v.push_back("#" + std::string(size_t(n) * 8, ' ') + "include");
    s.clear();
    for (int i = 0; i < n; ++i) s += "__has_include(<";
    v.push_back(s);
    s.clear();
    for (int i = 0; i < n; ++i) s += "#include MACRO_" + std::to_string(i) + "\n";
    v.push_back(s);
    return v;
  };
  for (int n : {20000, 200000}) {
    for (const std::string& text : hostile(n)) {
      uint64_t steps = 0;
      find_include_directives(text, &steps);
      EXPECT_LE(steps, 8 * text.size() + 100) << text.substr(0, 40) << " x " << n;
    }
  }
  std::string lines;
  for (int i = 0; i < 2000; ++i) lines += "#include <x" + std::to_string(i) + ".h>\n";
  EXPECT_EQ(find_include_directives(lines).size(), 2000u);
}

TEST(IncludeResolver, HeadersOfTheFoldersAreReadAndHandedOverByTheirName) {
  test::TempDir dir;
  const fs::path root = dir.file("k");
  write(root / "common.cuh", "#pragma once\n#include \"sub/tile.h\"\nconstexpr int kCommon = 1;\n");
  write(root / "sub" / "tile.h", "#pragma once\n#include \"more.h\"\n");  // sub/more.h, beside it
  write(root / "sub" / "more.h", "constexpr int kMore = 2;\n");
  const std::string kernel = (root / "k.cu").string();
  const std::string text = "#include \"common.cuh\"\n#include <cuda_fp16.h>\n#include \"absent.h\"\n";
  const auto h = resolve_includes(text, kernel, "k.cu");
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].name, "common.cuh");
  EXPECT_NE(h[0].content.find("kCommon"), std::string::npos);
  EXPECT_EQ(h[1].name, "sub/tile.h");
  EXPECT_EQ(h[2].name, "more.h");
  EXPECT_NE(h[2].content.find("kMore"), std::string::npos);
  // A cycle is read once.
  write(root / "a.h", "#include \"b.h\"\n");
  write(root / "b.h", "#include \"a.h\"\n");
  EXPECT_EQ(resolve_includes("#include \"a.h\"\n", kernel, "k.cu").size(), 2u);
}

TEST(IncludeResolver, WhatLeavesTheFolderIsRefusedWithItsLineAndNothingOfItIsRead) {
  test::TempDir dir;
  const fs::path root = dir.file("k");
  const std::string kernel = (root / "k.cu").string();
  write(root / "k.cu", "");
  write(dir.file("secret.h"), "hunter2_topsecret\n");
  fs::create_symlink(dir.file("secret.h"), root / "link.h");
  fs::create_directories(root / "folder.h");
  ASSERT_EQ(::mkfifo((root / "fifo.h").c_str(), 0600), 0);
  struct Case {
    std::string text, expect;
  };
  for (const Case& c : {
           Case{"\n#include \"/etc/passwd\"\n",
                "k.cu:2: #include \"/etc/passwd\" is refused: an absolute path"},
           Case{"#include \"../secret.h\"\n",
                "k.cu:1: #include \"../secret.h\" is refused: a name with a '..' part"},
           Case{"#include <../../../etc/shadow>\n", "'..' part"},
           Case{"#include </proc/self/environ>\n", "an absolute path"},
           Case{"#define P \"/etc/passwd\"\n#include P\n",
                "k.cu:2: #include P is refused: the file's name must"},
           Case{"#if __has_include(\"/etc/shadow\")\n#endif\n", "#has_include \"/etc/shadow\" is refused"},
           Case{"#include \"link.h\"\n", "leads out of the kernel file's folder"},
           Case{"#include \"fifo.h\"\n", "a FIFO"},
           Case{"#include \"folder.h\"\n", "is a folder"},
       }) {
    const std::string why = refusal(c.text, kernel);
    EXPECT_NE(why.find(c.expect), std::string::npos) << c.text << " -> " << why;
    EXPECT_EQ(why.find("hunter2"), std::string::npos) << why;
  }
  // The line is the file's, also in a header and in a .py file's CUDA string (which starts further down).
  write(root / "h.h", "\n\n#include \"../secret.h\"\n");
  EXPECT_NE(refusal("#include \"h.h\"\n", kernel).find("h.h:3: #include \"../secret.h\" is refused"),
            std::string::npos);
  try {
    resolve_includes("\n#include \"/etc/passwd\"\n", (root / "answer.py").string(), "answer.py", 40);
    ADD_FAILURE() << "not refused";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("answer.py:41:"), std::string::npos) << e.what();
  }
}

TEST(IncludeResolver, TwoFilesUnderOneNameAndTooMuchAreRefused) {
  test::TempDir dir;
  const fs::path root = dir.file("k");
  const std::string kernel = (root / "k.cu").string();
  write(root / "x.h", "int root_x;\n");
  write(root / "sub" / "a.h", "#include \"x.h\"\n");  // sub/x.h, not the root's
  write(root / "sub" / "x.h", "int sub_x;\n");
  EXPECT_NE(refusal("#include \"x.h\"\n#include \"sub/a.h\"\n", kernel).find("included under the same name"),
            std::string::npos);
  write(root / "big.h", std::string(size_t(4 << 20) + 1, 'x'));
  EXPECT_NE(refusal("#include \"big.h\"\n", kernel).find("a header may be at most"), std::string::npos);
  write(root / "nul.h", std::string("int a;\0int b;\n", 14));
  EXPECT_NE(refusal("#include \"nul.h\"\n", kernel).find("NUL byte"), std::string::npos);
  // Text with no file may include the toolkit's headers only (a quoted name is then left to NVRTC, which
  // looks in the toolkit's folder alone).
  EXPECT_TRUE(resolve_includes("#include \"x.h\"\n#include <mma.h>\n", "", "editor").empty());
}

// Headers read where the file is (a window on another machine) and checked by a remote engine without its
// folder: the same refusals, by name, and nothing read from the disk.
TEST(IncludeResolver, HeadersGivenByAWindowAreCheckedWithoutTheirFolder) {
  auto given = [](const std::string& text, const std::vector<IncludedHeader>& h) {
    try {
      check_given_headers(text, h, "my.cu", 1);
    } catch (const ValidationError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string text = "#include \"inc/a.h\"\n__global__ void k() {}\n";
  EXPECT_EQ(given(text, {{"inc/a.h", "/nowhere/inc/a.h", "#include \"b.h\"\n"}, {"b.h", "", "int x;\n"}}),
            "");
  EXPECT_NE(given(text, {{"/etc/passwd", "", ""}}).find("\"/etc/passwd\" is refused: an absolute path"),
            std::string::npos);
  EXPECT_NE(given(text, {{"inc/../../x.h", "", ""}}).find("is refused: a name with a '..' part"),
            std::string::npos);
  EXPECT_NE(given(text, {{"a.h", "", "x"}, {"a.h", "", "y"}}).find("is given twice"), std::string::npos);
  EXPECT_NE(given(text, {{"a.h", "", std::string("x\0y", 3)}}).find("holds a NUL byte"), std::string::npos);
  // A directive of the text or of a header that a local file would be refused for.
  EXPECT_NE(given("\n#include \"/etc/shadow\"\n", {}).find("my.cu:2: #include \"/etc/shadow\" is refused"),
            std::string::npos);
  EXPECT_NE(given(text, {{"inc/a.h", "", "#include \"../../up.h\"\n"}})
                .find("inc/a.h:1: #include \"../../up.h\" is refused: a name with a '..' part"),
            std::string::npos);
  // The limits of reading them.
  EXPECT_NE(given(text, std::vector<IncludedHeader>(size_t(kMaxIncludedFiles) + 1, {"a.h", "", ""}))
                .find("a kernel may include at most 256 files"),
            std::string::npos);
  std::vector<IncludedHeader> big;
  for (int i = 0; i < 5; ++i)
    big.push_back({"h" + std::to_string(i) + ".h", "", std::string(size_t(kMaxKernelSourceBytes), ' ')});
  EXPECT_NE(given(text, big).find("may be 16.0 MiB in all"), std::string::npos) << given(text, big);
}
