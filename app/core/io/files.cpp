#include "core/io/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

namespace ts {

namespace fs = std::filesystem;

namespace {

std::string why(int err) {
  return std::strerror(err);
}

fs::path folder_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// A name for a temporary file next to `target`: hidden, unique, and short enough for any file system.
fs::path temp_name(const fs::path& target) {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ uint64_t(::getpid()) << 32};
  std::string base = target.filename().string().substr(0, 96);
  char tag[24];
  std::snprintf(tag, sizeof tag, "%012llx", (unsigned long long)(rng() & 0xffffffffffffULL));
  return folder_of(target) / ("." + base + ".tilescope-" + tag + ".tmp");
}

// Creates a new temporary file next to `target` exclusively; returns its descriptor, or -1 with errno set.
int create_temp(const fs::path& target, fs::path* tmp) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    *tmp = temp_name(target);
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// lstat: 0 when absent, else the mode; throws ValidationError when the path cannot be looked at.
unsigned target_mode(const fs::path& p, const std::string& what) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) return unsigned(st.st_mode);
  if (errno == ENOENT || errno == ENOTDIR) return 0;  // absent (under a file: the folder check says so)
  throw ValidationError(what + p.string() + ": cannot be looked at (" + why(errno) + ")");
}

// "a symbolic link to X, which does not exist" / "... to X: a loop of symbolic links" / "... to X".
std::string describe_link(const fs::path& p) {
  std::error_code ec;
  const fs::path to = fs::read_symlink(p, ec);
  std::string text = "a symbolic link" + (ec ? std::string() : " to " + to.string());
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0)
    text += errno == ELOOP ? ": a loop of symbolic links" : errno == ENOENT ? ", which does not exist" : "";
  return text;
}

// The refusals common to the check before a run and the writer itself.
// `has_force`: the command has a --force to name in the message.
void refuse_target(const fs::path& p, unsigned mode, Replace replace, const std::string& what,
                   bool has_force = true) {
  if (mode == 0) return;
  if (S_ISDIR(mode)) throw ValidationError(what + p.string() + " is a folder");
  if (!S_ISREG(mode))
    throw ValidationError(
        what + p.string() + " is " +
        (S_ISLNK(mode) ? describe_link(p) + "; " : describe_file_type(mode) + ", not a regular file; ") +
        "it is never replaced" +
        (replace == Replace::RegularFile ? " (--force replaces regular files only)" : ""));
  if (replace == Replace::Never)
    throw ValidationError(what + p.string() + " already exists; choose another name" +
                          (has_force ? " or pass --force" : ""));
  if (replace == Replace::Reserved) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && st.st_size != 0)
      throw ValidationError(what + p.string() + " is not the empty file reserved for it; not replaced");
  }
}

void fsync_folder(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: the file itself is already on disk
  ::close(fd);
}

}  // namespace

std::string describe_file_type(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

void check_output_folder(const std::string& dir, const std::string& what, bool create) {
  const std::string w = what.empty() ? "" : what + " ";
  if (dir.empty()) throw ValidationError(w + "is empty; give a folder");
  const fs::path d(dir);
  fs::path probe = d;  // the folder a file is created in to see that it can be
  struct stat st {};
  if (::stat(d.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw ValidationError(w + dir + " is not a folder (" + describe_file_type(st.st_mode) + ")");
  } else {
    // Missing: the nearest part of the path that exists must be a folder (not "afile" of afile/sub, not a
    // dangling or looping link).
    fs::path at = d;
    for (int depth = 0;; ++depth) {
      if (::stat(at.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode))
          throw ValidationError(w + dir + ": " + at.string() + " is not a folder (" +
                                describe_file_type(st.st_mode) + ")");
        break;
      }
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) {  // a loop of symbolic links, no permission to look: name where
        fs::path culprit = at;
        for (fs::path up = at.parent_path();
             !up.empty() && up != culprit && ::stat(up.c_str(), &st) != 0 && errno == err;
             up = up.parent_path())
          culprit = up;
        throw ValidationError(w + dir + ": " + culprit.string() +
                              (err == ELOOP ? " is a loop of symbolic links" : " cannot be reached") + " (" +
                              why(err) + ")");
      }
      if (::lstat(at.c_str(), &st) == 0)  // there, but a symbolic link to nothing
        throw ValidationError(w + dir + ": " + at.string() + " is " + describe_link(at));
      const fs::path up = at.has_relative_path() && at.has_parent_path() ? at.parent_path() : fs::path(".");
      if (up == at || depth > 4096) throw ValidationError(w + dir + ": no part of the path exists");
      at = up;
    }
    probe = at;
    if (create) {
      std::error_code ec;
      fs::create_directories(d, ec);
      if (ec) throw ValidationError(w + dir + ": the folder cannot be created (" + ec.message() + ")");
      probe = d;
    }
  }
  fs::path tmp;
  const int fd = create_temp(probe / "probe", &tmp);
  if (fd < 0) {
    const int err = errno;
    throw ValidationError(w + dir + ": cannot create " +
                          (probe == d ? "files in this folder" : "it in " + probe.string()) + " (" +
                          why(err) + ")");
  }
  ::close(fd);
  ::unlink(tmp.c_str());
}

void check_output_path(const std::string& path, Replace replace, const std::string& what, bool has_force) {
  if (path.empty()) return;
  const std::string w = what.empty() ? "" : what + " ";
  const fs::path p(path);
  if (!p.has_filename() || p.filename() == "." || p.filename() == "..")
    throw ValidationError(w + path + " names a folder, not a file");
  refuse_target(p, target_mode(p, w), replace, w, has_force);
  const fs::path dir = folder_of(p);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw ValidationError(w + path + ": folder " + dir.string() +
                          (errno == ENOENT ? " does not exist" : " cannot be reached (" + why(errno) + ")"));
  if (!S_ISDIR(st.st_mode)) throw ValidationError(w + path + ": " + dir.string() + " is not a folder");
  fs::path tmp;
  const int fd = create_temp(p, &tmp);
  if (fd < 0)
    throw ValidationError(w + path + ": cannot create files in folder " + dir.string() + " (" + why(errno) +
                          ")");
  ::close(fd);
  ::unlink(tmp.c_str());
}

AtomicWriter::AtomicWriter(const fs::path& path, Replace replace) : m_path(path), m_replace(replace) {
  if (!path.has_filename()) throw ValidationError(path.string() + " names a folder, not a file");
  const unsigned mode = target_mode(path, "");
  refuse_target(path, mode, replace, "");
  m_fd = create_temp(path, &m_tmp);
  if (m_fd < 0)
    throw std::runtime_error(path.string() + ": cannot create a file in " + folder_of(path).string() + " (" +
                             why(errno) + ")");
  if (mode != 0) ::fchmod(m_fd, mode & 07777);  // a replaced file keeps its permissions
}

AtomicWriter::~AtomicWriter() {
  discard();
}

void AtomicWriter::discard() noexcept {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (!m_committed && !m_tmp.empty()) ::unlink(m_tmp.c_str());
  m_tmp.clear();
}

void AtomicWriter::write(const void* data, size_t bytes) {
  if (m_fd < 0) throw std::logic_error("AtomicWriter::write after commit");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(m_fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      discard();
      throw std::runtime_error(m_path.string() + ": write failed (" + why(err) + "); nothing was written");
    }
    p += n;
    bytes -= size_t(n);
  }
}

void AtomicWriter::commit() {
  if (m_fd < 0) throw std::logic_error("AtomicWriter::commit twice");
  auto fail = [&](const std::string& step, int err) {
    discard();
    throw std::runtime_error(m_path.string() + ": " + step + " failed (" + why(err) +
                             "); nothing was written");
  };
  if (::fsync(m_fd) != 0) fail("flushing to disk", errno);
  const int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) fail("closing", errno);

  // A reservation that is gone (removed meanwhile) is written as a new file: never onto a file that appeared.
  if (m_replace == Replace::Never || (m_replace == Replace::Reserved && target_mode(m_path, "") == 0)) {
    // Exclusive: the rename fails when the target exists, however recently it appeared.
    if (::renameat2(AT_FDCWD, m_tmp.c_str(), AT_FDCWD, m_path.c_str(), RENAME_NOREPLACE) != 0) {
      const int err = errno;
      if (err == EEXIST) {
        discard();
        throw ValidationError(m_path.string() + " already exists; not replaced");
      }
      if (err != EINVAL && err != ENOSYS && err != ENOTSUP) fail("renaming into place", err);
      // A file system without RENAME_NOREPLACE: a hard link is exclusive too.
      if (::link(m_tmp.c_str(), m_path.c_str()) == 0) {
        ::unlink(m_tmp.c_str());
      } else if (errno == EEXIST) {
        discard();
        throw ValidationError(m_path.string() + " already exists; not replaced");
      } else {
        // Neither (e.g. FAT): check, then rename.
        if (target_mode(m_path, "") != 0) {
          discard();
          throw ValidationError(m_path.string() + " already exists; not replaced");
        }
        if (std::rename(m_tmp.c_str(), m_path.c_str()) != 0) fail("renaming into place", errno);
      }
    }
  } else {
    const unsigned mode = target_mode(m_path, "");
    if (mode != 0 && !S_ISREG(mode)) {
      discard();
      refuse_target(m_path, mode, m_replace, "");
    }
    if (m_replace == Replace::Reserved) {
      try {
        refuse_target(m_path, mode, m_replace, "");  // still empty: still ours
      } catch (...) {
        discard();
        throw;
      }
    }
    if (std::rename(m_tmp.c_str(), m_path.c_str()) != 0) fail("renaming into place", errno);
  }
  m_committed = true;
  m_tmp.clear();
  fsync_folder(folder_of(m_path));
}

void write_file(const fs::path& path, std::string_view bytes, Replace replace) {
  AtomicWriter w(path, replace);
  w.write(bytes);
  w.commit();
}

NewNames::NewNames(const fs::path& dir, const std::string& prefix, const std::vector<std::string>& exts,
                   std::time_t when) {
  if (exts.empty()) throw std::invalid_argument("NewNames: no file to name");
  std::tm tm{};
  localtime_r(&when, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  for (int i = 1; m_paths.empty(); ++i) {
    if (i > 100000) throw std::runtime_error(dir.string() + ": no free name for " + prefix + "-" + stamp);
    const std::string stem = prefix + "-" + stamp + (i > 1 ? "-" + std::to_string(i) : "");
    std::vector<Taken> taken;
    bool free = true;
    for (const std::string& ext : exts) {
      const fs::path p = dir / (stem + "." + ext);
      const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
      if (fd < 0) {
        const int err = errno;
        release(taken, false);
        if (err == EEXIST) {  // this stem is someone's: the next suffix, for the whole set
          free = false;
          break;
        }
        throw std::runtime_error(p.string() + ": cannot create the file (" + why(err) + ")");
      }
      struct stat st {};
      ::fstat(fd, &st);
      ::close(fd);
      taken.push_back({p, st.st_dev, st.st_ino});
    }
    if (!free) continue;
    m_paths = std::move(taken);
    m_stem = stem;
  }
}

NewNames::NewNames(NewNames&& o) noexcept
    : m_paths(std::move(o.m_paths)), m_stem(std::move(o.m_stem)), m_keep(o.m_keep), m_complete(o.m_complete) {
  o.m_paths.clear();
}

NewNames::~NewNames() {
  if (!m_keep) release(m_paths, !m_complete);
}

void NewNames::written(size_t i) {
  Taken& t = m_paths.at(i);
  struct stat st {};
  if (::lstat(t.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  t.dev = st.st_dev;
  t.ino = st.st_ino;
  t.written = true;
}

bool NewNames::any_written() const {
  for (const Taken& t : m_paths)
    if (t.written) return true;
  return false;
}

void NewNames::release(const std::vector<Taken>& taken, bool written) noexcept {
  for (const Taken& t : taken) {
    if (t.written && !written) continue;
    struct stat st {};
    // Only the file made here (the empty reservation, or the one written through written()): a file written
    // under the name by someone else since (another inode) stays.
    if (::lstat(t.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == t.dev &&
        st.st_ino == t.ino && (t.written || st.st_size == 0))
      ::unlink(t.path.c_str());
  }
}

InputFile::InputFile(const std::string& path) : m_path(path) {
  // Non-blocking, so that opening a FIFO returns at once (it is then refused below).
  m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (m_fd < 0) throw ValidationError(path + ": cannot open (" + why(errno) + ")");
  struct stat st {};
  if (::fstat(m_fd, &st) != 0) {
    const int err = errno;
    ::close(m_fd);
    throw ValidationError(path + ": cannot open (" + why(err) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(m_fd);
    throw ValidationError(path + " is " + describe_file_type(unsigned(st.st_mode)) +
                          "; only regular files are read");
  }
  m_size = uint64_t(st.st_size);
}

InputFile::~InputFile() {
  if (m_fd >= 0) ::close(m_fd);
}

bool InputFile::read_at(uint64_t offset, void* out, size_t bytes) const {
  char* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(m_fd, p, bytes, off_t(offset));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw ValidationError(m_path + ": read error (" + why(errno) + ")");
    if (n == 0) return false;
    p += n;
    offset += uint64_t(n);
    bytes -= size_t(n);
  }
  return true;
}

uint64_t available_host_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  char b[48];
  std::snprintf(b, sizeof b, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return b;
}

std::string format_bytes_exact(uint64_t bytes) {
  const std::string text = format_bytes(double(bytes));
  // What the text says, read back: "4.0 MiB" is 4194304 bytes.
  double value = 0;
  char unit[8] = {};
  if (std::sscanf(text.c_str(), "%lf %7s", &value, unit) == 2) {
    const std::string u = unit;
    const double scale = u == "B"     ? 1.0
                         : u == "KiB" ? 1024.0
                         : u == "MiB" ? 1024.0 * 1024
                         : u == "GiB" ? 1024.0 * 1024 * 1024
                                      : 1024.0 * 1024 * 1024 * 1024;
    if (value * scale == double(bytes)) return text;
  }
  return text + " (" + std::to_string(bytes) + " bytes)";
}

void check_host_memory(uint64_t bytes, const std::string& what) {
  const uint64_t avail = available_host_memory();
  if (avail > 0 && bytes > avail)
    throw ValidationError(what + " needs " + format_bytes(double(bytes)) + " of host memory, but only " +
                          format_bytes(double(avail)) + " is available");
}

}  // namespace ts
