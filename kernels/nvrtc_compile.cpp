#include "nvrtc_compile.hpp"

#include "cubin_info.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <system_error>

#include "files.hpp"
#include "sha256.hpp"
#include "worker_protocol.hpp"

#if defined(TILESCOPE_HAVE_NVRTC)
#include <nvrtc.h>
#endif

namespace ts {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMemoryEntries = 64;
constexpr uint64_t kMaxCacheFile = 256u << 20;
constexpr const char* kCacheMagic = "TSMOD1";

struct Cache {
  std::mutex mu;
  std::map<std::string, std::pair<std::shared_ptr<const CompiledModule>, std::list<std::string>::iterator>>
      map;
  std::list<std::string> lru;  // most recent first
  ModuleCacheStats stats;
};
Cache& cache() {
  static Cache c;
  return c;
}

void remember(const std::shared_ptr<const CompiledModule>& m) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.map.find(m->key);
  if (it != c.map.end()) {
    c.lru.erase(it->second.second);
    c.map.erase(it);
  }
  c.lru.push_front(m->key);
  c.map[m->key] = {m, c.lru.begin()};
  while (c.lru.size() > kMemoryEntries) {
    c.map.erase(c.lru.back());
    c.lru.pop_back();
  }
}

std::shared_ptr<const CompiledModule> from_memory(const std::string& key) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.map.find(key);
  if (it == c.map.end()) return nullptr;
  c.lru.erase(it->second.second);
  c.lru.push_front(key);
  it->second.second = c.lru.begin();
  ++c.stats.memory_hits;
  return it->second.first;
}

// The CUDA headers NVRTC may include (cuda_fp16.h, mma.h, ...): the toolkit's include folder, where it is.
std::string cuda_include_dir() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("CUDA_HOME")) candidates.push_back(std::string(e) + "/include");
  if (const char* e = std::getenv("CUDA_PATH")) candidates.push_back(std::string(e) + "/include");
#if defined(TILESCOPE_CUDA_INCLUDE_DIR)
  candidates.push_back(TILESCOPE_CUDA_INCLUDE_DIR);
#endif
  candidates.push_back("/usr/local/cuda/include");
  std::error_code ec;
  for (const auto& c : candidates)
    if (fs::exists(fs::path(c) / "cuda_fp16.h", ec)) return c;
  return "";
}

std::vector<std::string> all_options(const CompileJob& job) {
  // --no-source-include: NVRTC does not look in the source's folder (or the working one) for a quoted
  // #include; the headers of the kernel's folder come in memory (job.headers), the rest from the toolkit.
  std::vector<std::string> o = {"--gpu-architecture=sm_" + std::to_string(job.arch),
                                "-std=c++17",
                                "-lineinfo",
                                "-Xptxas=-v",
                                "-DTILESCOPE=1",
                                "--no-source-include"};
  const std::string inc = cuda_include_dir();
  if (!inc.empty()) o.push_back("--include-path=" + inc);
  for (const auto& x : job.options) o.push_back(x);
  return o;
}

std::string key_of(const CompileJob& job, const std::vector<std::string>& options) {
  Sha256 h;
  h.field("tilescope-module-1");
  h.field(nvrtc_version());
  h.field(std::to_string(job.arch));
  for (const auto& o : options) h.field(o);
  h.field(job.name_expression);
  h.field(job.label);
  h.field(job.source);
  h.field(std::to_string(job.headers.size()));
  for (const auto& [name, content] : job.headers) {
    h.field(name);
    h.field(content);
  }
  return h.hex();
}

// [SECTION] The disk cache: one file per module, written to a temporary name and renamed.
std::string disk_dir() {
  const char* e = std::getenv("TILESCOPE_CACHE_DIR");
  if (e) return std::string(e) == "off" ? "" : std::string(e);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tilescope/kernels";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tilescope/kernels";
  return "";
}

void put_resources(wire::Writer& w, const PtxasResources& r) {
  w.u8(r.found ? 1 : 0);
  for (int v : {r.regs, r.static_smem, r.stack_bytes, r.spill_stores, r.spill_loads, r.barriers, r.cmem0})
    w.i32(v);
}
PtxasResources get_resources(wire::Reader& r) {
  PtxasResources p;
  p.found = r.u8() != 0;
  p.regs = r.i32();
  p.static_smem = r.i32();
  p.stack_bytes = r.i32();
  p.spill_stores = r.i32();
  p.spill_loads = r.i32();
  p.barriers = r.i32();
  p.cmem0 = r.i32();
  return p;
}

void save_to_disk(const CompiledModule& m) {
  const std::string dir = disk_dir();
  if (dir.empty() || !m.ok) return;
  try {
    std::error_code ec;
    fs::create_directories(dir, ec);
    wire::Writer w;
    w.str(kCacheMagic);
    w.str(m.key);
    w.str(m.log);
    w.str(m.cubin);
    w.str(m.ptx);
    w.str(m.lowered_name);
    put_resources(w, m.resources);
    w.i32(m.arch);
    w.u32(uint32_t(m.options.size()));
    for (const auto& o : m.options) w.str(o);
    // Through the program's one writer: a temporary file, flushed, renamed onto the entry.
    write_file(fs::path(dir) / (m.key + ".tsmod"), w.take(), Replace::RegularFile);
  } catch (const std::exception&) {
    // A cache that cannot be written only costs a compile next time.
  }
}

std::shared_ptr<const CompiledModule> load_from_disk(const std::string& key) {
  const std::string dir = disk_dir();
  if (dir.empty()) return nullptr;
  const fs::path p = fs::path(dir) / (key + ".tsmod");
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return nullptr;
  const uintmax_t size = fs::file_size(p, ec);
  if (ec || size > kMaxCacheFile) return nullptr;
  try {
    const InputFile f(p.string());
    std::string bytes(size_t(f.size()), '\0');
    if (f.size() > kMaxCacheFile || !f.read_at(0, bytes.data(), bytes.size())) return nullptr;
    wire::Reader r(bytes);
    if (r.str(16) != kCacheMagic || r.str(128) != key) return nullptr;
    auto m = std::make_shared<CompiledModule>();
    m->ok = true;
    m->key = key;
    m->log = r.str();
    m->cubin = r.str();
    m->ptx = r.str();
    m->lowered_name = r.str(4096);
    m->resources = get_resources(r);
    m->arch = r.i32();
    const uint32_t n = r.count(4);
    for (uint32_t i = 0; i < n; ++i) m->options.push_back(r.str(4096));
    r.done();
    if (m->cubin.empty() || m->lowered_name.empty()) return nullptr;
    m->diagnostics = parse_nvrtc_log(m->log);
    if (!m->resources.found)
      if (auto res = read_cubin_resources(m->cubin, m->lowered_name)) m->resources = *res;
    m->from_cache = true;
    return m;
  } catch (const std::exception&) {
    return nullptr;  // a damaged file: compile again (and replace it)
  }
}

}  // namespace

std::string module_cache_dir() {
  return disk_dir();
}

ModuleCacheStats module_cache_stats() {
  std::lock_guard<std::mutex> lock(cache().mu);
  return cache().stats;
}

void reset_module_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.map.clear();
  c.lru.clear();
  c.stats = {};
}

#if defined(TILESCOPE_HAVE_NVRTC)

bool nvrtc_available(std::string* why) {
  (void)why;
  return true;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "?";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::shared_ptr<const CompiledModule> cached_module(const CompileJob& job) {
  const std::string key = key_of(job, all_options(job));
  if (auto m = from_memory(key)) return m;
  if (auto m = load_from_disk(key)) {
    remember(m);
    std::lock_guard<std::mutex> lock(cache().mu);
    ++cache().stats.disk_hits;
    return m;
  }
  return nullptr;
}

std::shared_ptr<const CompiledModule> compile_module(const CompileJob& job) {
  if (auto m = cached_module(job)) return m;
  const std::vector<std::string> options = all_options(job);
  auto m = std::make_shared<CompiledModule>();
  m->key = key_of(job, options);
  m->arch = job.arch;
  m->options = options;
  const auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog = nullptr;
  std::vector<const char*> header_text, header_names;
  for (const auto& [name, content] : job.headers) {
    header_names.push_back(name.c_str());
    header_text.push_back(content.c_str());
  }
  nvrtcResult rc = nvrtcCreateProgram(&prog, job.source.c_str(), job.label.c_str(), int(job.headers.size()),
                                      header_text.data(), header_names.data());
  if (rc != NVRTC_SUCCESS) {
    m->log = std::string("NVRTC could not create the program: ") + nvrtcGetErrorString(rc);
    return m;
  }
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&prog};
  if (!job.name_expression.empty()) nvrtcAddNameExpression(prog, job.name_expression.c_str());
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  rc = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  m->log = log;
  m->diagnostics = parse_nvrtc_log(log);
  m->compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> lock(cache().mu);
    ++cache().stats.compiles;
  }
  if (rc != NVRTC_SUCCESS) {
    if (m->log.empty()) m->log = std::string("NVRTC: ") + nvrtcGetErrorString(rc);
    return m;
  }
  const char* lowered = nullptr;
  if (!job.name_expression.empty() &&
      nvrtcGetLoweredName(prog, job.name_expression.c_str(), &lowered) == NVRTC_SUCCESS && lowered)
    m->lowered_name = lowered;
  size_t cubin_size = 0;
  if (nvrtcGetCUBINSize(prog, &cubin_size) != NVRTC_SUCCESS || cubin_size == 0) {
    m->log += "\nNVRTC produced no CUBIN for sm_" + std::to_string(job.arch);
    return m;
  }
  m->cubin.assign(cubin_size, '\0');
  nvrtcGetCUBIN(prog, m->cubin.data());
  size_t ptx_size = 0;
  if (nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 0) {
    m->ptx.assign(ptx_size, '\0');
    nvrtcGetPTX(prog, m->ptx.data());
    while (!m->ptx.empty() && m->ptx.back() == '\0') m->ptx.pop_back();
  }
  m->resources = parse_ptxas_info(log, m->lowered_name);
  if (!m->resources.found) {
    // A log without ptxas's report (seen on a GPU machine with the same NVRTC): the cubin says it too.
    if (auto r = read_cubin_resources(m->cubin, m->lowered_name)) {
      m->resources = *r;
      m->log +=
          "\n(ptxas printed no resource report: registers, shared memory and stack read from the cubin)";
    }
  }
  m->ok = true;
  remember(m);
  save_to_disk(*m);
  return m;
}

#else  // built without the CUDA toolkit

bool nvrtc_available(std::string* why) {
  if (why) *why = "this build has no NVRTC (it was built without the CUDA toolkit)";
  return false;
}
std::string nvrtc_version() {
  return "none";
}
std::shared_ptr<const CompiledModule> cached_module(const CompileJob&) {
  return nullptr;
}
std::shared_ptr<const CompiledModule> compile_module(const CompileJob&) {
  throw std::runtime_error(
      "cannot compile kernels: this build has no NVRTC (it was built without the CUDA toolkit)");
}

#endif

}  // namespace ts
