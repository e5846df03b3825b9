#ifndef CUNUMPY_PIN_MEMORY_HPP
#define CUNUMPY_PIN_MEMORY_HPP

#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>

namespace cunumpy {

/// The page-locked ("pinned") host memory space of this Kokkos build, which
/// the device can copy from and into asynchronously: CudaHostPinnedSpace on
/// CUDA, HIPHostPinnedSpace on HIP, Kokkos::SharedHostPinnedSpace where
/// Kokkos (4.x) defines one for another backend, and HostSpace on a build
/// without a device backend (there is nothing to pin for).
#if defined(KOKKOS_ENABLE_CUDA)
using pinned_memory_space = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using pinned_memory_space = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_HAS_SHARED_HOST_PINNED_SPACE)
using pinned_memory_space = Kokkos::SharedHostPinnedSpace;
#else
using pinned_memory_space = Kokkos::HostSpace;
#endif

/// The view pin_memory (and an asynchronous copy to the host) returns for
/// `View`: its element type and rank in pinned_memory_space, LayoutLeft kept,
/// LayoutRight otherwise.
template <class View>
using pinned_view_t =
    Kokkos::View<typename View::non_const_data_type,
                 Impl::kept_layout_t<typename View::array_layout>,
                 pinned_memory_space>;

namespace Impl {

[[noreturn]] void throw_pin_memory_without_device(const char* argument,
                                                  const std::string& label);

} // namespace Impl

/// Returns a page-locked copy of the host view `host` — Python's
/// `xp.cuda.pin_memory`. Copies from pinned memory to the device are faster
/// and can overlap with computation; pin large buffers that are transferred
/// repeatedly, after a profile shows that transfers matter.
///
/// Always one host-to-host copy into new pinned memory (not a transfer: no
/// event). LayoutLeft is kept, other layouts arrive as LayoutRight; `host` is
/// never modified. `DeviceSpace` is the device to pin for (default: the
/// device space of this build); with the fake device of the tests, "pinned"
/// memory is ordinary host memory. Throws std::runtime_error when
/// `DeviceSpace` is a host space (a build without a device backend has no
/// page-locked memory), std::invalid_argument for an unallocated view.
template <class DeviceSpace = default_device_memory_space, class View,
          std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
pinned_view_t<View>
pin_memory(const View& host, SourceLocation where = SourceLocation::current()) {
  static_assert(is_host_memory_space_v<typename View::memory_space>,
                "cunumpy::pin_memory takes a host view; copy a device view "
                "with cunumpy::to_host first (or use HostStaging)");
  Impl::require_allocated(host, "cunumpy::pin_memory", "host");
  if constexpr (is_host_memory_space_v<typename DeviceSpace::memory_space>) {
    Impl::throw_pin_memory_without_device("host", host.label());
  } else {
    const Impl::ArrayShape shape = Impl::shape_of(host);
    Impl::ApiScope scope("pin_memory", where, &shape);
    return Impl::copy_into<pinned_memory_space>(host, "cunumpy::pin_memory",
                                                "host");
  }
}

/// pin_memory of a contiguous host range (std::vector, std::array, ...): a
/// rank-1 pinned copy of its elements.
template <class DeviceSpace = default_device_memory_space, class Range,
          std::enable_if_t<Impl::is_contiguous_range<Range>::value, int> = 0>
auto pin_memory(const Range& host,
                SourceLocation where = SourceLocation::current()) {
  return pin_memory<DeviceSpace>(Impl::host_view_of(host), where);
}

} // namespace cunumpy

#endif
