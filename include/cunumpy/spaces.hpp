#ifndef CUNUMPY_SPACES_HPP
#define CUNUMPY_SPACES_HPP

#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/space_names.hpp>

namespace cunumpy {

/// True for memory spaces whose memory is ordinary host memory, into which
/// `to_host` copies and from which it returns views as they are. Specialize
/// it for a host memory space of your own.
template <class MemorySpace>
struct is_host_memory_space : std::is_same<MemorySpace, Kokkos::HostSpace> {};

#ifdef KOKKOS_ENABLE_CUDA
template <>
struct is_host_memory_space<Kokkos::CudaHostPinnedSpace> : std::true_type {};
#endif
#ifdef KOKKOS_ENABLE_HIP
template <>
struct is_host_memory_space<Kokkos::HIPHostPinnedSpace> : std::true_type {};
#endif

template <class MemorySpace>
inline constexpr bool is_host_memory_space_v =
    is_host_memory_space<MemorySpace>::value;

/// The device memory space of this Kokkos build: the memory space of
/// `Kokkos::DefaultExecutionSpace` (CudaSpace on a CUDA build, HostSpace on a
/// host-only build, where conversions return their input).
using default_device_memory_space = Kokkos::DefaultExecutionSpace::memory_space;

/// True when this Kokkos build has a device distinct from the host.
inline constexpr bool has_device_backend =
    !is_host_memory_space_v<default_device_memory_space>;

} // namespace cunumpy

#endif
