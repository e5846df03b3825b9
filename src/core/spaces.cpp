#include <algorithm>
#include <atomic>
#include <mutex>
#include <sstream>

#include <cunumpy/space_names.hpp>

#include "environment.hpp"
#include "recorder.hpp"

namespace cunumpy {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

struct Registry {
  std::mutex mutex;
  std::vector<std::string> device_names;

  Registry() {
    // CUNUMPY_DEVICE_SPACES="FakeDevice,Other"
    if (auto list = Impl::environment("CUNUMPY_DEVICE_SPACES")) {
      std::stringstream stream(*list);
      std::string name;
      while (std::getline(stream, name, ',')) {
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (!name.empty())
          device_names.push_back(name);
      }
    }
  }
};

Registry& registry() {
  static Registry* instance = new Registry(); // used until process exit
  return *instance;
}

} // namespace

void register_device_space(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (std::find(r.device_names.begin(), r.device_names.end(), name) !=
      r.device_names.end())
    return;
  r.device_names.emplace_back(name);
  Impl::device_space_generation_counter.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<std::string> registered_device_spaces() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.device_names;
}

SpaceSide space_side(std::string_view name) {
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (std::find(r.device_names.begin(), r.device_names.end(), name) !=
        r.device_names.end())
      return SpaceSide::device;
  }
  if (ends_with(name, "HostPinned") || ends_with(name, "HostUSM") ||
      starts_with(name, "Host"))
    return SpaceSide::host;
  for (std::string_view device :
       {"Cuda", "HIP", "SYCL", "OpenMPTarget", "OpenACC"})
    if (starts_with(name, device))
      return SpaceSide::device;
  return SpaceSide::host;
}

namespace Impl {
std::atomic<std::uint64_t> device_space_generation_counter{0};
} // namespace Impl

} // namespace cunumpy
