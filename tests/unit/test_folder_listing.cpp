// What the window's own file dialog lists (app/core/io/folder_listing.hpp): folders first and without a size,
// hidden files recognised, file types by extension, dates as a file manager shows them, typed paths resolved.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>

#include <gtest/gtest.h>

#include "core/io/folder_listing.hpp"
#include "test_util.hpp"

using namespace ts;
namespace fs = std::filesystem;

TEST(FolderListing, FoldersComeFirstHaveNoSizeAndFilesAreSortedByNameAnyCase) {
  test::TempDir dir;
  fs::create_directories(dir.path() / "zeta");
  fs::create_directories(dir.path() / "Alpha");
  std::ofstream(dir.file("b.npy")) << std::string(2048, 'x');
  std::ofstream(dir.file("A.cu")) << "x";
  std::ofstream(dir.file(".hidden")) << "x";
  fs::create_symlink(dir.path() / "zeta", dir.path() / "link-to-folder");
  fs::create_symlink(dir.path() / "nowhere", dir.path() / "broken");
  ASSERT_EQ(::mkfifo(dir.file("pipe").c_str(), 0600), 0);
  const FolderListing l = list_folder(dir.path());
  EXPECT_TRUE(l.error.empty()) << l.error;
  std::vector<std::string> names;
  for (const auto& e : l.entries) names.push_back(e.name);
  const std::vector<std::string> want{"Alpha", "link-to-folder", "zeta",   ".hidden",
                                      "A.cu",  "b.npy",          "broken", "pipe"};
  EXPECT_EQ(names, want);
  for (const auto& e : l.entries) {
    if (e.kind == FolderEntry::Kind::Folder)
      EXPECT_FALSE(e.size.has_value()) << e.name << ": a folder has no size";
    if (e.name == "b.npy") {
      ASSERT_TRUE(e.size.has_value());
      EXPECT_EQ(*e.size, 2048u);
      EXPECT_GT(e.modified, 0);
    }
    if (e.name == "pipe" || e.name == "broken") {
      EXPECT_EQ(e.kind, FolderEntry::Kind::Other) << e.name;
      EXPECT_FALSE(e.size.has_value());
    }
  }
  EXPECT_TRUE(l.entries[3].hidden());
  EXPECT_FALSE(l.entries[4].hidden());
}

TEST(FolderListing, AFolderThatCannotBeReadSaysWhyAndAHugeOneIsCut) {
  test::TempDir dir;
  const FolderListing missing = list_folder(dir.path() / "absent");
  EXPECT_FALSE(missing.error.empty());
  EXPECT_TRUE(missing.entries.empty());
  for (int i = 0; i < 12; ++i) std::ofstream(dir.file("f" + std::to_string(i))) << "x";
  const FolderListing cut = list_folder(dir.path(), 5);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.entries.size(), 5u);
}

TEST(FolderListing, FileTypesMatchByExtensionAndAlwaysKeepFolders) {
  const FileType npy{"NumPy arrays (*.npy)", {".npy"}}, all{"All files", {}},
      kernels{"Kernels (*.cu, *.cuh, *.py)", {".cu", ".cuh", ".py"}};
  FolderEntry f;
  f.name = "a.npy";
  EXPECT_TRUE(npy.matches(f));
  f.name = "A.NPY";
  EXPECT_TRUE(npy.matches(f));
  f.name = "a.npy.txt";
  EXPECT_FALSE(npy.matches(f));
  f.name = ".npy";  // a hidden file named like the extension alone is not an array
  EXPECT_FALSE(npy.matches(f));
  EXPECT_TRUE(all.matches(f));
  f.name = "k.cuh";
  EXPECT_TRUE(kernels.matches(f));
  f.name = "k.c";
  EXPECT_FALSE(kernels.matches(f));
  FolderEntry folder;
  folder.name = "data";
  folder.kind = FolderEntry::Kind::Folder;
  EXPECT_TRUE(npy.matches(folder));
}

TEST(FolderListing, DatesReadAsAFileManagerShowsThem) {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  const int64_t now = 1764158400;  // 2025-11-26 12:00 UTC
  EXPECT_EQ(format_modified(now - 3600, now), "11:00");
  EXPECT_EQ(format_modified(now - 86400 * 30, now), "27 Oct");
  EXPECT_EQ(format_modified(now - 86400 * 400, now), "22 Oct 2024");
  EXPECT_EQ(format_modified(0, now), "");
  ::unsetenv("TZ");
  ::tzset();
}

TEST(FolderListing, TypedNamesBecomePathsFromTheFolderHomeOrRoot) {
  ::setenv("HOME", "/home/someone", 1);
  const fs::path here = "/data/run";
  EXPECT_EQ(resolve_typed(here, "a.npy"), fs::path("/data/run/a.npy"));
  EXPECT_EQ(resolve_typed(here, "sub/../b.npy"), fs::path("/data/run/b.npy"));
  EXPECT_EQ(resolve_typed(here, "/tmp/c.npy"), fs::path("/tmp/c.npy"));
  EXPECT_EQ(resolve_typed(here, "~/k.cu"), fs::path("/home/someone/k.cu"));
  EXPECT_EQ(resolve_typed(here, "~"), fs::path("/home/someone"));
  EXPECT_EQ(resolve_typed(here, ""), here);
}

TEST(FolderListing, PlacesAreLinuxOnesNeverWindowsWords) {
  test::TempDir dir;
  const fs::path home = dir.path() / "home";
  fs::create_directories(home / "Documents");
  fs::create_directories(home / "Schreibtisch");
  fs::create_directories(home / ".config");
  std::ofstream(home / ".config" / "user-dirs.dirs") << "XDG_DESKTOP_DIR=\"$HOME/Schreibtisch\"\n";
  ::setenv("HOME", home.c_str(), 1);
  ::unsetenv("XDG_CONFIG_HOME");
  const std::vector<Place> p = places(dir.path() / "work");
  std::vector<std::string> labels;
  for (const auto& x : p) labels.push_back(x.label);
  const std::vector<std::string> want{"Home", "Desktop", "Documents", "work", "File system"};
  EXPECT_EQ(labels, want);
  EXPECT_EQ(p[1].path, home / "Schreibtisch");
  EXPECT_EQ(p.back().path, fs::path("/"));
  for (const auto& l : labels) {
    EXPECT_EQ(l.find("This PC"), std::string::npos);
    EXPECT_EQ(l.find("Quick Access"), std::string::npos);
  }
}
