#include "kernels/user/nvrtc_compile.hpp"

#include "core/user_kernel/cubin_info.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <system_error>

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kernels/user/compiler_process.hpp"
#include "core/io/files.hpp"
#include "core/base/sha256.hpp"
#include "core/io/worker_protocol.hpp"

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

uint64_t compiler_stack_bytes() {
  return uint64_t(1) << 30;  // reserved, not used: pages are taken as the recursion reaches them
}

uint64_t compiler_memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const uint64_t half = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 2 : 0;
  const uint64_t cap = uint64_t(16) << 30;
  return half > 0 ? std::min(half, cap) : cap;
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

namespace {

// [SECTION] NVRTC itself: what the compiler process runs (never the window or the command line).
wire::CompiledMsg nvrtc_compile_here(const wire::CompileMsg& job) {
  wire::CompiledMsg out;
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
    out.result = nvrtcGetErrorString(rc);
    out.log = std::string("NVRTC could not create the program: ") + out.result;
    return out;
  }
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&prog};
  if (!job.name_expression.empty()) nvrtcAddNameExpression(prog, job.name_expression.c_str());
  std::vector<const char*> argv;
  for (const auto& o : job.options) argv.push_back(o.c_str());
  rc = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
  out.result = nvrtcGetErrorString(rc);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  out.log = log;
  out.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != NVRTC_SUCCESS) return out;
  const char* lowered = nullptr;
  if (!job.name_expression.empty() &&
      nvrtcGetLoweredName(prog, job.name_expression.c_str(), &lowered) == NVRTC_SUCCESS && lowered)
    out.lowered_name = lowered;
  size_t cubin_size = 0;
  if (nvrtcGetCUBINSize(prog, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
    out.cubin.assign(cubin_size, '\0');
    nvrtcGetCUBIN(prog, out.cubin.data());
  }
  size_t ptx_size = 0;
  if (nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 0) {
    out.ptx.assign(ptx_size, '\0');
    nvrtcGetPTX(prog, out.ptx.data());
    while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  }
  out.ok = true;
  return out;
}

}  // namespace

std::shared_ptr<const CompiledModule> compile_module(const CompileJob& job, const CancelToken* cancel) {
  if (auto m = cached_module(job)) return m;
  const std::vector<std::string> options = all_options(job);
  auto m = std::make_shared<CompiledModule>();
  m->key = key_of(job, options);
  m->arch = job.arch;
  m->options = options;
  wire::CompileMsg req;
  req.source = job.source;
  req.label = job.label;
  req.name_expression = job.name_expression;
  req.arch = job.arch;
  req.options = options;
  req.headers = job.headers;
  req.time_limit_s = job.time_limit_s;
  req.memory_limit = job.memory_limit > 0 ? job.memory_limit : compiler_memory_limit();
  req.stack_bytes = job.stack_bytes > 0 ? job.stack_bytes : compiler_stack_bytes();
  const CompilerOutcome c = compile_in_child(req, cancel);  // throws Cancelled
  {
    std::lock_guard<std::mutex> lock(cache().mu);
    ++cache().stats.compiles;
  }
  m->compile_s = c.wall_s;
  if (!c.failure.empty()) {
    m->compiler_failure = c.failure;
    m->log = c.failure + (c.output.empty() ? "" : "\nWhat the compiler printed:\n" + c.output);
    return m;
  }
  const wire::CompiledMsg& r = c.reply;
  m->log = r.log;
  m->diagnostics = parse_nvrtc_log(r.log);
  if (!r.ok) {
    if (m->log.empty()) m->log = "NVRTC: " + r.result;
    return m;
  }
  m->lowered_name = r.lowered_name;
  if (r.cubin.empty()) {
    m->log += "\nNVRTC produced no CUBIN for sm_" + std::to_string(job.arch);
    return m;
  }
  m->cubin = r.cubin;
  m->ptx = r.ptx;
  m->resources = parse_ptxas_info(m->log, m->lowered_name);
  if (!m->resources.found) {
    // A log without ptxas's report (seen on a GPU machine with the same NVRTC): the cubin says it too.
    if (auto res = read_cubin_resources(m->cubin, m->lowered_name)) {
      m->resources = *res;
      m->log +=
          "\n(ptxas printed no resource report: registers, shared memory and stack read from the cubin)";
    }
  }
  m->ok = true;
  remember(m);
  save_to_disk(*m);
  return m;
}

// [SECTION] The compiler process.
int run_compiler(int fd, int parent_pid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent_pid > 0 && getppid() != parent_pid) return 0;  // the app is gone already
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a crash of NVRTC is reported in words, not left as a core file
  wire::Message m;
  wire::CompileMsg req;
  try {
    if (wire::read_message(fd, &m, 30000) != wire::ReadStatus::Ok) return 2;
    req = wire::decode<wire::CompileMsg>(m);
  } catch (const wire::ProtocolError& e) {
    wire::write_message(fd, wire::encode(wire::ErrorMsg{wire::ErrorKind::Protocol, 0, "", e.what()}));
    return 2;
  }
  // Its own deadline, should the app not be there to kill it: SIGALRM ends the process.
  alarm(unsigned(std::ceil(req.time_limit_s)) + 2);
  uint64_t cap = 0;
  if (req.memory_limit > 0) {
    // Beyond what the process maps already (the program and its libraries). A sanitizer build reserves
    // terabytes of shadow address space: no limit there.
    const uint64_t now = address_space_bytes();
    if (now > 0 && now < (uint64_t(1) << 40)) {
      cap = now + req.stack_bytes + req.memory_limit;
      const rlimit as{rlim_t(cap), rlim_t(cap)};
      setrlimit(RLIMIT_AS, &as);
    }
  }
  wire::CompiledMsg out;
  struct Work {
    const wire::CompileMsg* req;
    wire::CompiledMsg* out;
  } work{&req, &out};
  auto body = [](void* p) -> void* {
    auto* w = static_cast<Work*>(p);
    try {
      *w->out = nvrtc_compile_here(*w->req);
    } catch (const std::bad_alloc&) {
      w->out->ok = false;
      w->out->result = "out of memory";
      w->out->log = "NVRTC ran out of memory";
    }
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (req.stack_bytes > 0) pthread_attr_setstacksize(&attr, size_t(req.stack_bytes));
  pthread_t t;
  const int rc = pthread_create(&t, &attr, body, &work);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    wire::write_message(fd, wire::encode(wire::ErrorMsg{
                                wire::ErrorKind::Other, 0, "",
                                std::string("cannot start the compiling thread: ") + std::strerror(rc)}));
    return 1;
  }
  pthread_join(t, nullptr);
  // A failure near the memory limit is likely the limit's doing (a library or a buffer NVRTC could not map):
  // said beside NVRTC's own words, which seldom name memory.
  if (!out.ok && cap > 0 &&
      address_space_bytes("VmPeak:") + std::min<uint64_t>(req.memory_limit, 256u << 20) >= cap)
    out.log += "\n(The compiler reached the memory it may use, " + format_bytes(double(req.memory_limit)) +
               " beyond its start: the failure above is likely from that.)";
  try {
    return wire::write_message(fd, wire::encode(out)) ? 0 : 1;
  } catch (const wire::ProtocolError& e) {  // a build too large for one message (over 64 MiB)
    wire::write_message(fd, wire::encode(wire::ErrorMsg{wire::ErrorKind::Other, 0, "", e.what()}));
    return 1;
  }
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
std::shared_ptr<const CompiledModule> compile_module(const CompileJob&, const CancelToken*) {
  throw std::runtime_error(
      "cannot compile kernels: this build has no NVRTC (it was built without the CUDA toolkit)");
}
int run_compiler(int, int) {
  std::fprintf(stderr,
               "tilescope compiler: this build has no NVRTC (it was built without the CUDA toolkit)\n");
  return 2;
}

#endif

}  // namespace ts
