#pragma once
// [SECTION] What the window's own file dialog shows (ui/dialogs/file_browser.cpp draws it): a folder's
// entries as a Linux file manager lists them, the places beside them, the file types, and a typed name turned
// into a path. No ImGui here, so the rules are unit-tested.
//   list_folder      folders first, then files, each by name (case-insensitive); a folder has no size
//   FileType         "NumPy arrays (*.npy)" with its extensions; no extensions: every file ("All files")
//   format_modified  "14:03" today, "26 Nov" this year, "26 Nov 2023" before
//   resolve_typed    "~/x", "/abs/x", "sub/x" or "x" against the folder shown
//   places           Home, Desktop, Documents, Downloads (those that exist), the folder TileScope was started
//                    in, and the file system's root
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ts {

struct FolderEntry {
  enum class Kind { Folder, File, Other };  // Other: a FIFO, device, socket or broken link
  std::string name;
  Kind kind = Kind::File;
  std::optional<uint64_t> size;  // regular files only
  int64_t modified = 0;          // seconds since the epoch (0: unknown)
  bool hidden() const { return !name.empty() && name[0] == '.'; }
};

struct FolderListing {
  std::filesystem::path folder;
  std::vector<FolderEntry> entries;
  std::string error;       // the folder could not be read (entries are empty then)
  bool truncated = false;  // more than max_entries: the first ones (in the folder's order) are listed
};

// Reads `folder` (symbolic links followed: a link to a folder lists as a folder). Never throws.
FolderListing list_folder(const std::filesystem::path& folder, size_t max_entries = 20000);

struct FileType {
  std::string label;                    // as the type list shows it
  std::vector<std::string> extensions;  // ".npy", ...; empty: every file
  // Folders always match (they are how one gets somewhere); files by extension, case-insensitively.
  bool matches(const FolderEntry& e) const;
};

// The date and time a file list shows, in local time, against `now` (both seconds since the epoch).
std::string format_modified(int64_t t, int64_t now);

// What a person typed in the name field, as a path: "~" and "~/..." from $HOME, an absolute path as it is,
// anything else inside `folder`. Empty text: `folder` itself.
std::filesystem::path resolve_typed(const std::filesystem::path& folder, const std::string& typed);

struct Place {
  std::string label;
  std::filesystem::path path;
};
// $HOME, its Desktop, Documents and Downloads (the XDG user folders of ~/.config/user-dirs.dirs when they are
// named there) that exist, `started_in` (labelled by its name), and "/" as "File system".
std::vector<Place> places(const std::filesystem::path& started_in);

}  // namespace ts
