#include "recorder/spaces.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/space_names.hpp>

#include "recorder/recorder.hpp"
#include "recorder/recording.hpp"
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

bool is_device_space_name(std::string_view name) {
  for (std::string_view device :
       {"Cuda", "HIP", "SYCL", "OpenMPTarget", "OpenACC"})
    if (starts_with(name, device))
      return true;
  return false;
}

Impl::SpaceRegistry& registry() {
  return Impl::library_recorder().spaces();
}

std::string host_space_refused(std::string_view name) {
  return "'" + std::string(name) +
         "' is a host memory space; as a device it would turn every host "
         "copy into an ignored device_copy and hide it (name only device "
         "spaces, e.g. the name of a LogicalMemorySpace)";
}

} // namespace

void register_device_space(std::string_view name) {
  std::optional<Impl::recording::Inside> inside;
  if (Impl::recording::active()) {
    Impl::recording::Line("register_device_space").text("name", name).write();
    inside.emplace();
  }
  registry().add_device(name);
}

std::vector<std::string> registered_device_spaces() {
  return registry().devices();
}

SpaceSide space_side(std::string_view name) {
  return registry().side(name);
}

namespace Impl {

SpaceRegistry::SpaceRegistry(const std::vector<std::string>& device_names) {
  for (const std::string& name : device_names) {
    if (is_host_space_name(name)) {
      warn("CUNUMPY_DEVICE_SPACES: " + host_space_refused(name) +
           "; it is left out");
      continue;
    }
    if (std::find(device_names_.begin(), device_names_.end(), name) ==
        device_names_.end())
      device_names_.push_back(name);
  }
}

void SpaceRegistry::add_device(std::string_view name) {
  if (is_host_space_name(name))
    throw std::invalid_argument("cunumpy::register_device_space: " +
                                host_space_refused(name));
  std::lock_guard lock(mutex_);
  if (std::find(device_names_.begin(), device_names_.end(), name) !=
      device_names_.end())
    return;
  device_names_.emplace_back(name);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

bool SpaceRegistry::is_device(std::string_view name) {
  std::lock_guard lock(mutex_);
  return std::find(device_names_.begin(), device_names_.end(), name) !=
         device_names_.end();
}

SpaceSide SpaceRegistry::side(std::string_view name) {
  if (is_device(name))
    return SpaceSide::device;
  if (is_host_space_name(name))
    return SpaceSide::host;
  return is_device_space_name(name) ? SpaceSide::device : SpaceSide::host;
}

bool SpaceRegistry::is_known(std::string_view name) {
  // Kokkos' HBWSpace ("HBW") and AnonymousSpace are host spaces too.
  return is_device(name) || is_host_space_name(name) ||
         is_device_space_name(name) || name == "HBW" || name == "Anonymous" ||
         name == "AnonymousSpace";
}

std::vector<std::string> SpaceRegistry::devices() const {
  std::lock_guard lock(mutex_);
  return device_names_;
}

void SpaceRegistry::note_unknown(std::string_view name) {
  std::lock_guard lock(mutex_);
  if (std::find(unknown_names_.begin(), unknown_names_.end(), name) ==
      unknown_names_.end())
    unknown_names_.emplace_back(name);
}

SpaceRegistry::Unknown SpaceRegistry::unknown() const {
  std::lock_guard lock(mutex_);
  Unknown result;
  // Names registered as devices since they were seen are known now.
  for (const std::string& name : unknown_names_)
    if (std::find(device_names_.begin(), device_names_.end(), name) ==
        device_names_.end())
      result.names.push_back(name);
  result.copies = unknown_copies_.load(std::memory_order_relaxed);
  return result;
}

bool is_host_space_name(std::string_view name) {
  return name.find("HostPinned") != std::string_view::npos ||
         ends_with(name, "HostUSM") || starts_with(name, "Host");
}

} // namespace Impl
} // namespace cunumpy
