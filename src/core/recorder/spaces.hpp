#ifndef CUNUMPY_SRC_RECORDER_SPACES_HPP
#define CUNUMPY_SRC_RECORDER_SPACES_HPP

// The registry of memory space names (spaces.cpp): which names are device
// spaces, and the copies a space of unknown name left uncounted.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cunumpy::Impl {

/// Changes whenever a device space is registered (invalidates caches).
extern std::atomic<std::uint64_t> device_space_generation_counter;
inline std::uint64_t device_space_generation() noexcept {
  return device_space_generation_counter.load(std::memory_order_acquire);
}

/// Whether cunumpy knows the memory space `name` by name: a registered
/// device, or a name of Kokkos' host or device spaces. space_side takes an
/// unknown name for a host space.
bool is_known_space(std::string_view name);

/// Whether `name` is the name of one of Kokkos' host memory spaces (Host,
/// *HostPinned, *HostUSM, ...): registering it as a device would turn every
/// host copy into an ignored device_copy.
bool is_host_space_name(std::string_view name);

/// Copies the recorder took for host-to-host because a space of the pair
/// was unknown: most likely a device space missing from
/// CUNUMPY_DEVICE_SPACES, whose copies then count as no transfer.
struct UnknownSpaceCopies {
  std::vector<std::string> names; ///< the unknown spaces, in order seen
  std::uint64_t copies = 0;
};
UnknownSpaceCopies unknown_space_copies();
/// Called by the recorder: `name` is an unknown space of a host-to-host
/// pair (once per space and thread), and a copy between such spaces.
void note_unknown_space(std::string_view name);
void count_unknown_space_copy() noexcept;

} // namespace cunumpy::Impl

#endif
