#ifndef CUNUMPY_SRC_RECORDER_KOKKOS_RULES_HPP
#define CUNUMPY_SRC_RECORDER_KOKKOS_RULES_HPP

// What Kokkos' tool events mean, as pure functions of what Kokkos reports
// and of the Kokkos Tools interface of the Kokkos that calls cunumpy: which
// fences are waits the program asked for, which copies block the host,
// which copies are scalar reads. No state and no Kokkos headers, so every
// rule is tested on any build.

#include <cstdint>
#include <cstring>
#include <string_view>

#include <cunumpy/event.hpp>
#include <cunumpy/space_names.hpp>

#include "tools/kokkosp.hpp"

// The rules called on every event are inline: they are a few instructions.

namespace cunumpy::Impl {

/// The Kokkos the rules apply to: the Kokkos Tools interface version it
/// passes to kokkosp_init_library (the in-process hooks take it from the
/// Kokkos headers they are built with); 0 until a front end knows it.
struct KokkosTraits {
  std::uint64_t interface = 0;
  /// From Kokkos 3.5 on, Kokkos reports fences, names them, and fences a
  /// blocking deep_copy inside its begin/end pair; Kokkos 3.4 reports none.
  bool reports_fences() const noexcept {
    return interface >= kokkosp::interface_3_5;
  }
};

/// A fence a tool asked for (Kokkos' global fencing for tools), not the
/// program: not a wait of the program's.
bool is_tool_fence(std::string_view name) noexcept;

/// A fence of a host execution space (Serial, OpenMP, HPX, Threads) is not
/// a wait for a device. Kokkos 3.5 and later encode the execution space
/// type in the top 8 bits of the device id.
bool is_host_execution_space_fence(std::uint32_t device_id,
                                   const KokkosTraits& kokkos) noexcept;

/// Kokkos' execution space type in a kernel's or fence's device id (the
/// top 8 bits, Kokkos::Tools::Experimental::DeviceType; Kokkos 3.4 encodes
/// it in kernels' ids too).
inline constexpr std::uint32_t cuda_space_type = 2;
inline std::uint32_t execution_space_type(std::uint32_t device_id) noexcept {
  return device_id >> 24;
}

/// A kernel or fence of a device execution space: Cuda, HIP, OpenMPTarget,
/// SYCL or OpenACC.
inline bool is_device_execution_space(std::uint32_t device_id) noexcept {
  const std::uint32_t type = execution_space_type(device_id);
  return type == 2 || type == 3 || type == 4 || type == 7 || type == 8;
}

/// The memory space of a device execution space type, as Kokkos' copies
/// name it: "Cuda", "HIP", "OpenMPTargetSpace", "SYCLDeviceUSM",
/// "OpenACC"; "" for another type.
std::string_view device_space_name(std::uint32_t type) noexcept;

/// A fence Kokkos makes before the host reads a device kernel's result: a
/// parallel_reduce or parallel_scan into a host value, after the kernel
/// ("fence due to result being value, not view") or inside its launch
/// ("Result Not Device Accessible", the result in pinned memory).
bool is_result_read_fence(std::string_view name) noexcept;

/// A wait the program did not ask for: a fence Kokkos made on its own
/// (named after what needs it), not a user's Kokkos::fence().
bool is_implicit_fence(std::string_view name) noexcept;

/// A global fence (Kokkos::fence) is reported once per execution space,
/// with the reason in the low bits of the device id being 0.
inline bool is_global_fence(std::uint32_t device_id) noexcept {
  return (device_id & 0x00ffffffu) == 0;
}

/// The kind of a copy between spaces of the given sides; nothing for a
/// copy between two host spaces (not a transfer).
inline bool copy_kind(SpaceSide dst, SpaceSide src, EventKind& kind) noexcept {
  if (dst == SpaceSide::host && src == SpaceSide::host)
    return false;
  kind = dst == SpaceSide::host   ? EventKind::to_host
         : src == SpaceSide::host ? EventKind::to_device
                                  : EventKind::device_copy;
  return true;
}

/// A deep copy into a host scalar (a device value read by the host).
inline bool is_scalar_read(EventKind kind, const char* dst_label) noexcept {
  // The first letter inline: most labels are not "Scalar", and the call
  // of strcmp was about 20 instructions a copy.
  return kind == EventKind::to_host && dst_label != nullptr &&
         dst_label[0] == 'S' && std::strcmp(dst_label + 1, "calar") == 0;
}

/// Whether the host waited for a copy: cunumpy's own asynchronous copies
/// never; on Kokkos 4 a copy Kokkos fenced inside its begin/end pair, and a
/// scalar read; on Kokkos 3.4, which reports no fences, every other copy.
inline bool copy_is_blocking(bool async_call, bool saw_fence, bool scalar,
                             const KokkosTraits& kokkos) noexcept {
  if (async_call)
    return false;
  if (kokkos.reports_fences())
    return saw_fence || scalar; // a copy on an execution space has no fence
  return true;
}

} // namespace cunumpy::Impl

#endif
