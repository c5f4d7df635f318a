#include "core/engine/job_runner.hpp"

#include <algorithm>

namespace ts {

bool JobReport::has(const std::string& name) const {
  return std::find(running.begin(), running.end(), name) != running.end();
}

bool JobReport::has_any(std::initializer_list<const char*> names) const {
  for (const char* n : names)
    if (has(n)) return true;
  return false;
}

JobReport JobRunner::report(std::initializer_list<std::pair<const char*, bool>> more) const {
  JobReport r;
  for (const auto& [name, on] : more)
    if (on) r.running.emplace_back(name);
  std::lock_guard<std::mutex> lock(m_mu);
  r.running.insert(r.running.end(), m_running.begin(), m_running.end());
  return r;
}

uint64_t JobRunner::started_count() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_started;
}

void JobRunner::started(const std::string& name) {
  std::lock_guard<std::mutex> lock(m_mu);
  m_running.push_back(name);
  ++m_started;
}

void JobRunner::finished(const std::string& name) {
  std::lock_guard<std::mutex> lock(m_mu);
  const auto it = std::find(m_running.begin(), m_running.end(), name);
  if (it != m_running.end()) m_running.erase(it);
}

}  // namespace ts
