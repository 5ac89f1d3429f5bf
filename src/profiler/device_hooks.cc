// Hooks device backends register with the profiler, and the running session's device config.
#include "profiler/device_hooks.h"

#include <atomic>
#include <mutex>
#include <utility>

namespace opscope {
namespace {

struct Hooks {
  std::mutex mu;
  int next_id = 1;
  std::vector<std::pair<int, std::function<void()>>> flush;
  std::vector<std::pair<int, std::function<uint64_t()>>> in_flight;
};

Hooks& GetHooks() {
  static Hooks* hooks = new Hooks;  // backends may unregister during static destruction
  return *hooks;
}

std::atomic<const DeviceConfig*> g_active_config{nullptr};

}  // namespace

const DeviceConfig* ActiveDeviceConfig() { return g_active_config.load(std::memory_order_acquire); }

int RegisterDeviceFlushHook(std::function<void()> hook) {
  Hooks& h = GetHooks();
  std::lock_guard<std::mutex> lock(h.mu);
  h.flush.emplace_back(h.next_id, std::move(hook));
  return h.next_id++;
}

int RegisterDeviceInFlightQuery(std::function<uint64_t()> query) {
  Hooks& h = GetHooks();
  std::lock_guard<std::mutex> lock(h.mu);
  h.in_flight.emplace_back(h.next_id, std::move(query));
  return h.next_id++;
}

void UnregisterDeviceHooks(int id) {
  Hooks& h = GetHooks();
  std::lock_guard<std::mutex> lock(h.mu);
  std::erase_if(h.flush, [id](const auto& e) { return e.first == id; });
  std::erase_if(h.in_flight, [id](const auto& e) { return e.first == id; });
}

namespace internal {

void SetActiveDeviceConfig(const DeviceConfig* config) {
  g_active_config.store(config, std::memory_order_release);
}

Status RunDeviceFlushHooks() {
  std::vector<std::function<void()>> hooks;
  {
    Hooks& h = GetHooks();
    std::lock_guard<std::mutex> lock(h.mu);
    for (auto& [id, f] : h.flush) hooks.push_back(f);
  }
  std::string errors;
  for (auto& f : hooks) {
    try {
      f();
    } catch (const std::exception& e) {
      errors += std::string(errors.empty() ? "" : "; ") + "device flush hook failed: " + e.what();
    }
  }
  return errors.empty() ? Status::Ok() : Status::Unavailable(std::move(errors));
}

uint64_t QueryDevicesInFlight() {
  std::vector<std::function<uint64_t()>> queries;
  {
    Hooks& h = GetHooks();
    std::lock_guard<std::mutex> lock(h.mu);
    for (auto& [id, f] : h.in_flight) queries.push_back(f);
  }
  uint64_t total = 0;
  for (auto& q : queries) {
    try {
      total += q();
    } catch (const std::exception&) {
      // A failing query reports nothing; the flush hook error already says what broke.
    }
  }
  return total;
}

}  // namespace internal
}  // namespace opscope
