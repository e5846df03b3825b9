#include "recorder/spaces.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include <cunumpy/space_names.hpp>

#include "support/environment.hpp"

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
  std::vector<std::string> unknown_names; // seen in host-to-host copies

  Registry() {
    // CUNUMPY_DEVICE_SPACES="FakeDevice,Other"
    if (auto list = Impl::environment("CUNUMPY_DEVICE_SPACES")) {
      std::stringstream stream(*list);
      std::string name;
      while (std::getline(stream, name, ',')) {
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (name.empty())
          continue;
        if (Impl::is_host_space_name(name)) {
          Impl::warn("CUNUMPY_DEVICE_SPACES: '" + name +
                     "' is a host memory space; as a device it would turn "
                     "every host copy into an ignored device_copy, so it is "
                     "left out (name only device spaces)");
          continue;
        }
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
  if (Impl::is_host_space_name(name))
    throw std::invalid_argument(
        "cunumpy::register_device_space: '" + std::string(name) +
        "' is a host memory space; as a device it would turn every host "
        "copy into an ignored device_copy and hide it (name only device "
        "spaces, e.g. the name of a LogicalMemorySpace)");
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

namespace {

bool is_registered_device(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return std::find(r.device_names.begin(), r.device_names.end(), name) !=
         r.device_names.end();
}

bool is_device_space_name(std::string_view name) {
  for (std::string_view device :
       {"Cuda", "HIP", "SYCL", "OpenMPTarget", "OpenACC"})
    if (starts_with(name, device))
      return true;
  return false;
}

std::atomic<std::uint64_t> unknown_copies{0};

} // namespace

SpaceSide space_side(std::string_view name) {
  if (is_registered_device(name))
    return SpaceSide::device;
  if (Impl::is_host_space_name(name))
    return SpaceSide::host;
  return is_device_space_name(name) ? SpaceSide::device : SpaceSide::host;
}

namespace Impl {
std::atomic<std::uint64_t> device_space_generation_counter{0};

bool is_host_space_name(std::string_view name) {
  return name.find("HostPinned") != std::string_view::npos ||
         ends_with(name, "HostUSM") || starts_with(name, "Host");
}

bool is_known_space(std::string_view name) {
  // Kokkos' HBWSpace ("HBW") and AnonymousSpace are host spaces too.
  return is_registered_device(name) || is_host_space_name(name) ||
         is_device_space_name(name) || name == "HBW" || name == "Anonymous" ||
         name == "AnonymousSpace";
}

void note_unknown_space(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (std::find(r.unknown_names.begin(), r.unknown_names.end(), name) ==
      r.unknown_names.end())
    r.unknown_names.emplace_back(name);
}

void count_unknown_space_copy() noexcept {
  unknown_copies.fetch_add(1, std::memory_order_relaxed);
}

UnknownSpaceCopies unknown_space_copies() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  UnknownSpaceCopies result;
  // Names registered as devices since they were seen are known now.
  for (const std::string& name : r.unknown_names)
    if (std::find(r.device_names.begin(), r.device_names.end(), name) ==
        r.device_names.end())
      result.names.push_back(name);
  result.copies = unknown_copies.load(std::memory_order_relaxed);
  return result;
}
} // namespace Impl

} // namespace cunumpy
