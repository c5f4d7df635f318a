#include "core/user_kernel/kernel_workshop.hpp"

#include <algorithm>
#include <cctype>

namespace ts {

std::shared_ptr<const UserKernel> KernelWorkshop::open(const std::string& path,
                                                       const UserKernelOptions& o) const {
  return UserKernel::open_file(path, o);
}

std::shared_ptr<const UserKernel> KernelWorkshop::understand(
    KernelSource src, const std::string& kernel, const UserKernelSpec* spec,
    const std::vector<IncludedHeader>* headers) const {
  return UserKernel::make(std::move(src), kernel, spec, headers);
}

void KernelWorkshop::publish(std::shared_ptr<const UserKernel> k) {
  const std::string id = k->id();
  {
    std::lock_guard<std::mutex> lock(m_mu);
    ++m_serial;
    bool replaced = false;
    for (auto& x : m_kernels)
      if (x->id() == id) {
        x = std::move(k);
        replaced = true;
        break;
      }
    if (!replaced) m_kernels.push_back(std::move(k));
  }
  registered_changed(id);
}

void KernelWorkshop::withdraw(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    auto it = std::find_if(m_kernels.begin(), m_kernels.end(), [&](const auto& x) { return x->id() == id; });
    if (it == m_kernels.end()) return;
    m_kernels.erase(it);
    ++m_serial;
  }
  registered_changed(id);
}

std::shared_ptr<const UserKernel> KernelWorkshop::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(m_mu);
  for (const auto& x : m_kernels)
    if (x->id() == id) return x;
  return nullptr;
}

std::vector<std::shared_ptr<const UserKernel>> KernelWorkshop::registered() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_kernels;
}

std::vector<KernelInfo> KernelWorkshop::infos() const {
  const bool buildable = can_build(nullptr);
  std::vector<KernelInfo> v;
  for (const auto& k : registered()) {
    v.push_back(k->info());
    v.back().has_cuda = buildable;
  }
  return v;
}

std::vector<SanitizerReport> reports_not_run(const std::vector<std::string>& tools, const ProblemSpec& shape,
                                             const std::string& why) {
  std::vector<SanitizerReport> out;
  for (const auto& t : tools) {
    SanitizerReport r;
    r.tool = t;
    r.problem = why;
    r.shape = shape;
    out.push_back(r);
  }
  return out;
}

int parse_arch(const std::string& text, const KernelWorkshop& w) {
  std::string t = text;
  for (char& c : t) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (t.rfind("sm_", 0) == 0) t = t.substr(3);
  if (t.rfind("compute_", 0) == 0) t = t.substr(8);
  t.erase(std::remove(t.begin(), t.end(), '.'), t.end());
  const bool digits = !t.empty() && t.size() <= 3 && std::all_of(t.begin(), t.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  const int v = digits ? std::stoi(t) : 0;
  const std::vector<int> archs = w.architectures();
  if (std::find(archs.begin(), archs.end(), v) == archs.end()) {
    std::string list;
    for (int a : archs) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
    throw ValidationError("--arch '" + text + "' is not an architecture " + w.compiler() + " compiles for (" +
                          list + "; e.g. sm_90 or 8.9)");
  }
  return v;
}

}  // namespace ts
