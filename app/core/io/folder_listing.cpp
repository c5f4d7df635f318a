#include "core/io/folder_listing.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <system_error>
#include <tuple>

namespace ts {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

fs::path home_dir() {
  const char* h = std::getenv("HOME");
  if (h && *h) return h;
  const passwd* pw = ::getpwuid(::getuid());  // $HOME unset: the account's home folder
  return pw && pw->pw_dir ? fs::path(pw->pw_dir) : fs::path();
}

}  // namespace

FolderListing list_folder(const fs::path& folder, size_t max_entries) {
  FolderListing out;
  out.folder = folder;
  std::error_code ec;
  fs::directory_iterator it(folder, fs::directory_options::none, ec);
  if (ec) {
    out.error = ec.message();
    return out;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      out.error = ec.message();
      break;
    }
    if (out.entries.size() >= max_entries) {
      out.truncated = true;
      break;
    }
    FolderEntry e;
    e.name = it->path().filename().string();
    struct stat st {};
    // stat follows links: a link to a folder is a folder, a broken link is "other".
    if (::stat(it->path().c_str(), &st) != 0) {
      e.kind = FolderEntry::Kind::Other;
    } else {
      e.modified = int64_t(st.st_mtime);
      if (S_ISDIR(st.st_mode)) {
        e.kind = FolderEntry::Kind::Folder;
      } else if (S_ISREG(st.st_mode)) {
        e.kind = FolderEntry::Kind::File;
        e.size = uint64_t(st.st_size);
      } else {
        e.kind = FolderEntry::Kind::Other;
      }
    }
    out.entries.push_back(std::move(e));
  }
  std::sort(out.entries.begin(), out.entries.end(), [](const FolderEntry& a, const FolderEntry& b) {
    const bool fa = a.kind == FolderEntry::Kind::Folder, fb = b.kind == FolderEntry::Kind::Folder;
    if (fa != fb) return fa;
    const std::string la = lower(a.name), lb = lower(b.name);
    return la != lb ? la < lb : a.name < b.name;
  });
  return out;
}

bool FileType::matches(const FolderEntry& e) const {
  if (e.kind == FolderEntry::Kind::Folder || extensions.empty()) return true;
  const std::string name = lower(e.name);
  for (const std::string& ext : extensions) {
    const std::string x = lower(ext);
    if (name.size() > x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0) return true;
  }
  return false;
}

std::string format_modified(int64_t t, int64_t now) {
  if (t <= 0) return "";
  const std::time_t tt = std::time_t(t), nn = std::time_t(now);
  std::tm a{}, b{};
  localtime_r(&tt, &a);
  localtime_r(&nn, &b);
  char buf[32];
  if (a.tm_year == b.tm_year && a.tm_yday == b.tm_yday)
    std::strftime(buf, sizeof buf, "%H:%M", &a);
  else if (a.tm_year == b.tm_year)
    std::strftime(buf, sizeof buf, "%e %b", &a);
  else
    std::strftime(buf, sizeof buf, "%e %b %Y", &a);
  std::string s = buf;
  if (!s.empty() && s[0] == ' ') s.erase(0, 1);  // %e pads single-digit days
  return s;
}

fs::path resolve_typed(const fs::path& folder, const std::string& typed) {
  if (typed.empty()) return folder;
  if (typed == "~") return home_dir().empty() ? folder : home_dir();
  if (typed.rfind("~/", 0) == 0 && !home_dir().empty())
    return (home_dir() / typed.substr(2)).lexically_normal();
  const fs::path p(typed);
  return (p.is_absolute() ? p : folder / p).lexically_normal();
}

namespace {
// XDG_<NAME>_DIR from ~/.config/user-dirs.dirs ("$HOME/Schreibtisch"), else $HOME/<fallback>.
fs::path user_dir(const char* name, const char* fallback) {
  const fs::path home = home_dir();
  const char* x = std::getenv("XDG_CONFIG_HOME");
  const fs::path file = ((x && *x) ? fs::path(x) : home / ".config") / "user-dirs.dirs";
  std::ifstream in(file);
  const std::string key = std::string("XDG_") + name + "_DIR=";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::string v = line.substr(key.size());
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    if (v.rfind("$HOME", 0) == 0) return home / fs::path(v.substr(5)).relative_path();
    if (!v.empty() && v[0] == '/') return v;
  }
  return home / fallback;
}
}  // namespace

std::vector<Place> places(const fs::path& started_in) {
  std::vector<Place> out;
  std::error_code ec;
  const fs::path home = home_dir();
  if (!home.empty() && fs::is_directory(home, ec)) {
    out.push_back({"Home", home});
    for (auto [label, name, fallback] :
         {std::tuple<const char*, const char*, const char*>{"Desktop", "DESKTOP", "Desktop"},
          {"Documents", "DOCUMENTS", "Documents"},
          {"Downloads", "DOWNLOAD", "Downloads"}}) {
      const fs::path p = user_dir(name, fallback);
      if (p != home && fs::is_directory(p, ec)) out.push_back({label, p});
    }
  }
  if (!started_in.empty() && started_in != home && started_in != "/") {
    const std::string name = started_in.filename().string();
    out.push_back({name.empty() ? started_in.string() : name, started_in});
  }
  out.push_back({"File system", "/"});
  return out;
}

}  // namespace ts
