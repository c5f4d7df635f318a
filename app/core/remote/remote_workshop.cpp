#include "core/remote/remote_workshop.hpp"

#include "core/base/sha256.hpp"
#include "core/remote/remote_backend.hpp"

namespace ts::remote {

namespace {

// What names a build: everything the engine's compiler gets (the plain job, made here as the engine makes
// it). Modules are kept per engine (forgotten at a reconnect), so its compiler's version need not be in it.
std::string build_key(const UserKernel& k, int tile, int arch, const ExprVars& sizes) {
  const CompileJob j = k.plain_job(tile, arch, sizes);
  Sha256 h;
  h.field(j.source);
  h.field(j.label);
  h.field(std::to_string(j.options.size()));
  for (const auto& o : j.options) h.field(o);
  h.field(j.name_expression);
  h.field(std::to_string(j.arch));
  h.field(std::to_string(j.headers.size()));
  for (const auto& [name, content] : j.headers) {
    h.field(name);
    h.field(content);
  }
  return h.hex();
}

}  // namespace

RemoteWorkshop::RemoteWorkshop(std::function<std::shared_ptr<Connection>()> link) : m_link(std::move(link)) {}

WorkshopInfo RemoteWorkshop::info() const {
  const auto c = m_link();
  return c ? c->engine().workshop : WorkshopInfo{};
}

bool RemoteWorkshop::can_build(std::string* why) const {
  const WorkshopInfo w = info();
  if (!w.can_build && why) *why = "the engine cannot build kernels: " + w.build_why;
  return w.can_build;
}

std::string RemoteWorkshop::compiler() const {
  return info().compiler;
}

std::vector<int> RemoteWorkshop::architectures() const {
  return info().architectures;
}

int RemoteWorkshop::device_arch() const {
  return info().device_arch;
}

std::shared_ptr<const CompiledModule> RemoteWorkshop::build(const UserKernel& k, int tile, int arch,
                                                            const ExprVars& sizes,
                                                            const CancelToken* cancel) const {
  if (cancel) cancel->throw_if_cancelled();
  std::string key;
  try {
    key = build_key(k, tile, arch, sizes);
  } catch (const ValidationError&) {
    // A job that cannot be made here cannot be made there either: the engine says why.
  }
  if (!key.empty())
    if (auto m = module(key)) {
      auto copy = std::make_shared<CompiledModule>(*m);
      copy->from_cache = true;
      copy->compile_s = 0;
      return copy;
    }
  const auto c = m_link();
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lk(m_mu);
    generation = m_generation;
  }
  BuildMsg b;
  b.kernel = kernel_text(k);
  b.tile = tile;
  b.arch = arch;
  b.sizes = sizes;
  const uint64_t id = c->next_id();
  ++m_round_trips;
  BuiltMsg got = decode<BuiltMsg>(answer(c->call({encode(b, id)}, id, cancel), Type::Built));
  auto m = std::make_shared<const CompiledModule>(std::move(got.module));
  if (got.failed) throw CompileError(got.error, m, got.first_line);
  if (!key.empty() && m->ok) {
    std::lock_guard<std::mutex> lk(m_mu);
    if (generation == m_generation && m_modules.emplace(key, m).second) {
      m_order.push_back(key);
      if (m_order.size() > kKeptModules) {
        m_modules.erase(m_order.front());
        m_order.pop_front();
      }
    }
  }
  return m;
}

std::shared_ptr<const CompiledModule> RemoteWorkshop::cached_build(const UserKernel& k, int tile, int arch,
                                                                   const ExprVars& sizes) const {
  std::string key;
  try {
    key = build_key(k, tile, arch, sizes);
  } catch (const ValidationError&) {
    return nullptr;
  }
  return module(key);
}

std::shared_ptr<const CompiledModule> RemoteWorkshop::module(const std::string& key) const {
  std::lock_guard<std::mutex> lk(m_mu);
  auto it = m_modules.find(key);
  return it == m_modules.end() ? nullptr : it->second;
}

bool RemoteWorkshop::can_sanitize(std::string* why) const {
  const WorkshopInfo w = info();
  if (!w.can_sanitize && why) *why = "compute-sanitizer on the engine: " + w.sanitize_why;
  return w.can_sanitize;
}

std::vector<SanitizerReport> RemoteWorkshop::sanitize(const UserKernel& k, const ProblemSpec& spec,
                                                      const std::vector<std::string>& tools, double timeout_s,
                                                      const CancelToken* cancel) const {
  if (std::string why; !can_sanitize(&why)) return reports_not_run(tools, spec, why);
  if (cancel) cancel->throw_if_cancelled();
  const auto c = m_link();
  SanitizeMsg s;
  s.kernel = kernel_text(k);
  s.spec = spec;
  s.tools = tools;
  s.timeout_s = timeout_s;
  const uint64_t id = c->next_id();
  ++m_round_trips;
  return decode<SanitizedMsg>(answer(c->call({encode(s, id)}, id, cancel), Type::Sanitized)).reports;
}

void RemoteWorkshop::tell(Connection& c, const std::string& id) {
  const uint64_t rid = c.next_id();
  if (const auto k = find(id))
    c.send({encode(PublishMsg{kernel_text(*k)}, rid)}, rid);  // its answer is not waited for
  else
    c.post(encode(WithdrawMsg{id}, rid));
}

void RemoteWorkshop::registered_changed(const std::string& id) {
  std::lock_guard<std::mutex> lk(m_send_mu);
  const auto c = m_link();
  if (!c) return;
  try {
    tell(*c, id);
  } catch (const EngineLost&) {
    // The kernel stays registered here; a new engine (reconnect) gets it.
  }
}

void RemoteWorkshop::reconnect(Connection& fresh, const std::function<void()>& install) {
  // A publish meanwhile waits for m_send_mu, then tells the link installed by then: the new engine.
  std::lock_guard<std::mutex> lk(m_send_mu);
  for (const auto& k : registered()) tell(fresh, k->id());
  install();
  std::lock_guard<std::mutex> mk(m_mu);
  m_modules.clear();
  m_order.clear();
  ++m_generation;
}

}  // namespace ts::remote
