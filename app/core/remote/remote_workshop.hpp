#pragma once
// [SECTION] A person's kernel through a remote engine: the KernelWorkshop of a RemoteBackend
// (remote_backend.hpp). The file is read and understood here, where it is (open() and understand(), plain
// C++, with the headers of its folder it includes); what is built, checked and run is the engine's:
//   - publish() and withdraw() register the kernel here (the kernel list never waits for the link) and send
//     it to the engine (Publish: its text, kernel, corrections and headers), which understands the same
//     kernel and publishes it in its own workshop, so its backend runs it in its own worker, with the fault
//     and hang isolation a local one has. A new engine (RemoteBackend::reconnect) gets every registered
//     kernel again;
//   - build() and sanitize() are round trips (Build -> Built, Sanitize -> Sanitized), stopped by their
//     CancelToken (a Cancel frame). A compile error comes back as the CompileError the engine's workshop
//     threw: its message, the module's log and diagnostics at their lines;
//   - cached_build() answers from the modules received from this engine, never from the link; build() too,
//     for a module received already (as a local workshop answers from its cache);
//   - can_build(), compiler(), architectures(), device_arch() and can_sanitize() are what the engine's Hello
//     said (WorkshopInfo), answered without a round trip.
// Thread-safe.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/remote/protocol.hpp"
#include "core/user_kernel/kernel_workshop.hpp"

namespace ts::remote {

class Connection;

class RemoteWorkshop final : public KernelWorkshop {
 public:
  // `link`: the engine connected now (a new one after a reconnect).
  explicit RemoteWorkshop(std::function<std::shared_ptr<Connection>()> link);

  bool can_build(std::string* why) const override;
  std::string compiler() const override;
  std::vector<int> architectures() const override;
  int device_arch() const override;
  std::shared_ptr<const CompiledModule> build(const UserKernel& k, int tile, int arch, const ExprVars& sizes,
                                              const CancelToken* cancel = nullptr) const override;
  std::shared_ptr<const CompiledModule> cached_build(const UserKernel& k, int tile, int arch,
                                                     const ExprVars& sizes) const override;
  bool can_sanitize(std::string* why) const override;
  std::vector<SanitizerReport> sanitize(const UserKernel& k, const ProblemSpec& spec,
                                        const std::vector<std::string>& tools, double timeout_s,
                                        const CancelToken* cancel = nullptr) const override;

  // A new engine (RemoteBackend::reconnect): every registered kernel is published to `fresh`, then
  // `install` makes it the link, so no request reaches it before the kernels; the modules of the old engine
  // are forgotten.
  void reconnect(Connection& fresh, const std::function<void()>& install);
  // Round trips so far (Build and Sanitize; for the tests: a cached build makes none).
  uint64_t round_trips() const { return m_round_trips; }

 protected:
  void registered_changed(const std::string& id) override;

 private:
  WorkshopInfo info() const;
  std::shared_ptr<const CompiledModule> module(const std::string& key) const;
  // Sends the register's state of `id` to `c` (Publish of the kernel, or Withdraw). Under m_send_mu.
  void tell(Connection& c, const std::string& id);

  std::function<std::shared_ptr<Connection>()> m_link;
  // Held while the engine is told of the register (a publish, a reconnect's republication), so the engine
  // ends with the register's latest state whatever the order of the threads.
  std::mutex m_send_mu;
  mutable std::mutex m_mu;    // m_modules, m_order, m_generation
  uint64_t m_generation = 0;  // engines connected: a module of an earlier one is not kept
  mutable std::map<std::string, std::shared_ptr<const CompiledModule>> m_modules;  // by the build's key
  mutable std::deque<std::string> m_order;  // oldest first: at most kKeptModules are kept
  mutable std::atomic<uint64_t> m_round_trips{0};
  static constexpr size_t kKeptModules = 256;
};

}  // namespace ts::remote
