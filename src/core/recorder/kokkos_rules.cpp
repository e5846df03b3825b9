#include "recorder/kokkos_rules.hpp"

#include <cstring>

#if !defined(CUNUMPY_KOKKOS_VERSION) || !defined(CUNUMPY_KOKKOS_DEVICE_BACKEND)
#error "src/CMakeLists.txt defines CUNUMPY_KOKKOS_VERSION and _DEVICE_BACKEND"
#endif

namespace cunumpy::Impl {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

} // namespace

KokkosTraits build_kokkos_traits() noexcept {
  return {CUNUMPY_KOKKOS_VERSION, CUNUMPY_KOKKOS_DEVICE_BACKEND != 0};
}

bool is_tool_fence(std::string_view name) noexcept {
  return name.find("Kokkos Profile Tool Fence") != std::string_view::npos;
}

bool is_host_execution_space_fence(std::uint32_t device_id,
                                   const KokkosTraits& kokkos) noexcept {
  if (!kokkos.reports_fences() || !kokkos.device_backend)
    return false;
  const std::uint32_t type = device_id >> 24;
  // Serial, OpenMP, HPX, Threads.
  return type == 0 || type == 1 || type == 5 || type == 6;
}

bool is_implicit_fence(std::string_view name) noexcept {
  // Kokkos names the fences a user asks for without a name "... Unnamed
  // (Global|Instance) Fence"; its own fences are named after what needs them.
  if (name.find("Unnamed") != std::string_view::npos)
    return false;
  return starts_with(name, "Kokkos::") ||
         name.find("Space::impl_") != std::string_view::npos ||
         starts_with(name, "SharedAllocationRecord"); // a device allocation
}

bool is_global_fence(std::uint32_t device_id) noexcept {
  return (device_id & 0x00ffffffu) == 0;
}

bool copy_kind(SpaceSide dst, SpaceSide src, EventKind& kind) noexcept {
  if (dst == SpaceSide::host && src == SpaceSide::host)
    return false;
  kind = dst == SpaceSide::host   ? EventKind::to_host
         : src == SpaceSide::host ? EventKind::to_device
                                  : EventKind::device_copy;
  return true;
}

bool is_scalar_read(EventKind kind, const char* dst_label) noexcept {
  return kind == EventKind::to_host && dst_label != nullptr &&
         std::strcmp(dst_label, "Scalar") == 0;
}

bool copy_is_blocking(bool async_call, bool saw_fence, bool scalar,
                      const KokkosTraits& kokkos) noexcept {
  if (async_call)
    return false;
  if (kokkos.reports_fences())
    return saw_fence || scalar; // a copy on an execution space has no fence
  return true;
}

} // namespace cunumpy::Impl
