#pragma once
// [SECTION] The files a person names: reading them safely, and the one way the program writes a file.
//
// Reading: only regular files are read. A FIFO, a device, a socket or a folder is refused before anything can
// block on it (the file is opened non-blocking, then checked with fstat).
//
// Writing: every writer of the program (.npy, PNG, CSV, JSON, bench tables, settings, panel exports) goes
// through AtomicWriter / write_file. The bytes go to a new temporary file created exclusively (O_EXCL) under
// a unique name in the target's folder, are flushed to disk (fsync) and checked, and only then renamed onto
// the target. A failed write (a full disk, an I/O error) leaves the old file untouched and no temporary
// behind.
//   Replace::Never        an existing target is never replaced, also one that appears while writing (the
//                         final step is an exclusive rename or link, not a check followed by a rename).
//   Replace::RegularFile  (--force) replaces a regular file only; never a symbolic link, FIFO, device or
//   folder.
//   Replace::Reserved     a name taken by NewNames: replaces the empty file reserved under it, and nothing
//                         else (a file that is not empty, or not a regular file, is refused).
//
// Naming: every export that picks a name itself (figures, panel exports, screenshots, a session kept aside)
// takes it through NewNames, exclusively.
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/problem.hpp"

namespace ts {

enum class Replace { Never, RegularFile, Reserved };

// Before any work is spent: checks that `path` could be written under `replace` (the folder exists and a new
// file can be created in it, the target is absent, or a regular file that may be replaced). Throws
// ValidationError naming `what` (e.g. "--out"), the path and the reason. An empty path is accepted.
// `has_force`: the command has a --force, which the message for an existing file then names.
void check_output_path(const std::string& path, Replace replace, const std::string& what,
                       bool has_force = true);

// A folder files will be created in: throws ValidationError naming `what`, the path and the reason when it is
// empty, not a folder (a file, a dangling or looping symbolic link, under a file: "afile/sub"), cannot be
// reached, or a new file cannot be created in it. A missing folder is made with its parents when `create`;
// otherwise only checked: its nearest existing parent must be a folder new entries can be created in (the
// folder is made when the files are written, so a command refused later leaves nothing behind).
void check_output_folder(const std::string& dir, const std::string& what, bool create = true);

class AtomicWriter {
 public:
  // Creates the temporary file next to `path`. Throws ValidationError when the target may not be replaced
  // (exists under Replace::Never, or is not a regular file), std::runtime_error when the folder cannot be
  // written.
  AtomicWriter(const std::filesystem::path& path, Replace replace);
  ~AtomicWriter();  // without commit(): the temporary file is removed, the target untouched
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  // Throws std::runtime_error naming the path and the reason (e.g. "No space left on device").
  void write(const void* data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // fsync, close, then the rename onto the target; throws as write() does, or ValidationError when the target
  // appeared meanwhile under Replace::Never (or became something other than a regular file).
  void commit();

 private:
  void discard() noexcept;
  std::filesystem::path m_path, m_tmp;
  Replace m_replace;
  int m_fd = -1;
  bool m_committed = false;
};

// The whole of `bytes` to `path` through an AtomicWriter.
void write_file(const std::filesystem::path& path, std::string_view bytes, Replace replace);

// [SECTION] New names for exports. NewNames takes <prefix>-YYYYmmdd-HHMMSS.<ext> in `dir` for every ext of
// `exts` (one stem for all of them), or the first stem with -2, -3, ... whose names are all free. Taking is
// exclusive: each file is created empty with O_EXCL, so two exports in the same second, in one process or in
// two, never get the same name, and no name of a set is a file someone else made. Write each with
// Replace::Reserved (AtomicWriter replaces the empty reservation in one rename). A name never written is
// removed when the NewNames goes (an export that failed leaves nothing behind), unless keep() was called.
// A set written whole or not at all (a figure's PNG, CSV and JSON): call written(i) after each file, then
// complete(); a NewNames that goes before complete() also removes the files written under it (each only while
// it is still the file written here), so a write that fails midway (a full disk) leaves none of the set.
// Throws std::runtime_error when a name cannot be created for another reason than that it exists (a
// read-only folder). `when`: the time in the name (local time).
class NewNames {
 public:
  NewNames(const std::filesystem::path& dir, const std::string& prefix, const std::vector<std::string>& exts,
           std::time_t when = std::time(nullptr));
  ~NewNames();
  NewNames(NewNames&& o) noexcept;
  NewNames(const NewNames&) = delete;
  NewNames& operator=(const NewNames&) = delete;
  NewNames& operator=(NewNames&&) = delete;

  const std::filesystem::path& operator[](size_t i) const { return m_paths.at(i).path; }
  size_t count() const { return m_paths.size(); }
  const std::string& stem() const { return m_stem; }  // "tilescope-bars-20250131-120000-2"
  void keep() { m_keep = true; }  // the caller writes the files later: the empty reservations stay
  void written(size_t i);         // the file of index i was written (see above)
  void complete() { m_complete = true; }
  bool any_written() const;

 private:
  struct Taken {
    std::filesystem::path path;
    dev_t dev = 0;
    ino_t ino = 0;
    bool written = false;  // dev and ino are then the written file's
  };
  // Removes those still empty and ours, and (with `written`) the files written here.
  static void release(const std::vector<Taken>& taken, bool written) noexcept;
  std::vector<Taken> m_paths;
  std::string m_stem;
  bool m_keep = false, m_complete = false;
};

// A regular file opened for reading. Throws ValidationError "<path>: cannot open (reason)" or "<path> is not
// a regular file (a FIFO)" and the like.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return m_size; }
  // Reads exactly `bytes` at `offset`; false when the file ends first. Throws ValidationError on I/O errors.
  bool read_at(uint64_t offset, void* out, size_t bytes) const;

 private:
  std::string m_path;
  int m_fd = -1;
  uint64_t m_size = 0;
};

// What kind of file `path` is, for messages: "a FIFO", "a folder", "a symbolic link", ...
std::string describe_file_type(unsigned mode);

// Host memory that can still be allocated (MemAvailable of /proc/meminfo); 0 when unknown.
uint64_t available_host_memory();
// Throws ValidationError when `bytes` exceed the memory available ("<what> needs 4.0 GiB of host memory
// ...").
void check_host_memory(uint64_t bytes, const std::string& what);
std::string format_bytes(double bytes);  // "512 B", "3.5 MiB", "64.0 GiB"
// For a size beside a limit: format_bytes, and the exact count where that rounds ("4.0 MiB (4194305 bytes)"
// beside a limit of "4.0 MiB"), so a size just over a limit never reads as the limit itself.
std::string format_bytes_exact(uint64_t bytes);

}  // namespace ts
