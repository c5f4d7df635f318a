#pragma once
// Cooperative cancellation: a run checks its token between chunks of work and throws Cancelled.
#include <atomic>
#include <memory>
#include <stdexcept>

namespace ts {

class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("run superseded by a newer request") {}
};

class CancelToken {
 public:
  CancelToken() : m_flag(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() const { m_flag->store(true); }
  bool cancelled() const { return m_flag->load(std::memory_order_relaxed); }
  void throw_if_cancelled() const {
    if (cancelled()) throw Cancelled();
  }

 private:
  std::shared_ptr<std::atomic<bool>> m_flag;
};

}  // namespace ts
