#ifndef CUNUMPY_SRC_RECORDER_SPACES_HPP
#define CUNUMPY_SRC_RECORDER_SPACES_HPP

// The registry of memory space names (spaces.cpp): which names are device
// spaces, and the copies a space of unknown name left uncounted.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <cunumpy/space_names.hpp>

namespace cunumpy::Impl {

/// The memory space names cunumpy was told are devices
/// (register_device_space, CUNUMPY_DEVICE_SPACES), and the unknown names
/// seen in copies. Owned by the recorder; thread-safe.
class SpaceRegistry {
public:
  /// `device_names` from the settings; a host space's name is left out with
  /// one line on stderr.
  explicit SpaceRegistry(const std::vector<std::string>& device_names);

  /// Throws std::invalid_argument for a host space's name.
  void add_device(std::string_view name);
  bool is_device(std::string_view name);
  /// Which side of a copy the space `name` is on: a registered device, a
  /// name of Kokkos' device spaces, else the host (an unknown name too).
  SpaceSide side(std::string_view name);
  /// Whether the space `name` is known by name: a registered device, or a
  /// name of Kokkos' host or device spaces.
  bool is_known(std::string_view name);
  /// Changes whenever a device space is registered (invalidates caches).
  std::uint64_t generation() const noexcept {
    return generation_.load(std::memory_order_acquire);
  }
  std::vector<std::string> devices() const;
  void note_unknown(std::string_view name);
  struct Unknown {
    std::vector<std::string> names;
    std::uint64_t copies = 0;
  };
  Unknown unknown() const;
  void count_unknown_copy() noexcept {
    unknown_copies_.fetch_add(1, std::memory_order_relaxed);
  }

  /// Around fork (Recorder::instance's handlers).
  void lock_for_fork() noexcept { mutex_.lock(); }
  void unlock_after_fork() noexcept { mutex_.unlock(); }

private:
  std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> device_names_;
  std::vector<std::string> unknown_names_; // seen in host-to-host copies
  std::atomic<std::uint64_t> unknown_copies_{0};
};

/// Whether `name` is the name of one of Kokkos' host memory spaces (Host,
/// *HostPinned, *HostUSM, ...): registering it as a device would turn every
/// host copy into an ignored device_copy.
bool is_host_space_name(std::string_view name);

} // namespace cunumpy::Impl

#endif
