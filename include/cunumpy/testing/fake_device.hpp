#ifndef CUNUMPY_TESTING_FAKE_DEVICE_HPP
#define CUNUMPY_TESTING_FAKE_DEVICE_HPP

// A fake device for tests on machines without a GPU: a memory space that is
// host memory underneath but that Kokkos treats as a distinct space, so
// copies between it and HostSpace go through Kokkos::deep_copy and fire real
// Kokkos Tools events. Kokkos 3.x provides it as a LogicalMemorySpace; Kokkos
// removed logical memory spaces in 4.3, where CUNUMPY_HAS_FAKE_DEVICE is 0 and
// tests that need a distinct device skip.

#include <cstdio>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/spaces.hpp>

#if KOKKOS_VERSION < 40300
#define CUNUMPY_HAS_FAKE_DEVICE 1
#else
#define CUNUMPY_HAS_FAKE_DEVICE 0
#endif

namespace cunumpy::testing {

/// The name the fake device carries in Kokkos Tools events.
inline constexpr const char* fake_device_name = "FakeDevice";

#if CUNUMPY_HAS_FAKE_DEVICE
struct FakeDeviceNamer {
  static constexpr const char* get_name() { return fake_device_name; }
};

/// A memory space named "FakeDevice" over HostSpace; kernels on its views
/// run on the default host execution space.
using FakeDevice = Kokkos::Experimental::LogicalMemorySpace<
    Kokkos::HostSpace, Kokkos::DefaultHostExecutionSpace, FakeDeviceNamer,
    Kokkos::Experimental::LogicalSpaceSharesAccess::shared_access>;

#endif

/// Registers "FakeDevice" as a device space, so copies to and from it are
/// transfers. Idempotent.
inline void register_fake_device() {
  register_device_space(fake_device_name);
}

/// The device memory space examples and demos run on: the device of this
/// Kokkos build, or the fake device on a host-only Kokkos 3 build (call
/// register_fake_device() first), or HostSpace when neither exists.
#if CUNUMPY_HAS_FAKE_DEVICE
using example_device_space =
    std::conditional_t<has_device_backend, default_device_memory_space,
                       FakeDevice>;
#else
using example_device_space = default_device_memory_space;
#endif

/// For examples and demos: registers the fake device and, when the build has
/// no device distinct from the host, says so on stdout (nothing is copied).
inline void setup_example_device() {
  register_fake_device();
  if constexpr (is_host_memory_space_v<example_device_space>)
    std::printf("note: this Kokkos build has no device distinct from the "
                "host (and no fake device): nothing is copied\n");
}

} // namespace cunumpy::testing

#if CUNUMPY_HAS_FAKE_DEVICE
// Kokkos 3's logical spaces and AnonymousSpace both specialize
// MemorySpaceAccess for "any other space", which is ambiguous for the pair
// and breaks Kokkos::deep_copy's fallback path; say it for FakeDevice.
namespace Kokkos::Impl {
template <>
struct MemorySpaceAccess<Kokkos::AnonymousSpace, cunumpy::testing::FakeDevice> {
  enum : bool { assignable = true };
  enum : bool { accessible = true };
  enum : bool { deepcopy = true };
};
template <>
struct MemorySpaceAccess<cunumpy::testing::FakeDevice, Kokkos::AnonymousSpace> {
  enum : bool { assignable = true };
  enum : bool { accessible = true };
  enum : bool { deepcopy = true };
};
// Like a real device, FakeDevice views get HostSpace mirrors (so
// create_mirror_view and DualView copy), although the host can access them.
template <> struct HostMirror<cunumpy::testing::FakeDevice> {
  using Space = Kokkos::HostSpace;
};
template <>
struct HostMirror<Kokkos::Device<Kokkos::DefaultHostExecutionSpace,
                                 cunumpy::testing::FakeDevice>> {
  using Space = Kokkos::HostSpace;
};
} // namespace Kokkos::Impl
#endif

#endif
