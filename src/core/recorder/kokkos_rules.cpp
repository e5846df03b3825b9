#include "recorder/kokkos_rules.hpp"

namespace cunumpy::Impl {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

} // namespace

bool is_tool_fence(std::string_view name) noexcept {
  return name.find("Kokkos Profile Tool Fence") != std::string_view::npos;
}

bool is_host_execution_space_fence(std::uint32_t device_id,
                                   const KokkosTraits& kokkos) noexcept {
  if (!kokkos.reports_fences())
    return false;
  const std::uint32_t type = device_id >> 24;
  // Serial, OpenMP, HPX, Threads.
  return type == 0 || type == 1 || type == 5 || type == 6;
}

std::string_view device_space_name(std::uint32_t type) noexcept {
  switch (type) {
  case 2:
    return "Cuda";
  case 3:
    return "HIP";
  case 4:
    return "OpenMPTargetSpace";
  case 7:
    return "SYCLDeviceUSM";
  case 8:
    return "OpenACC";
  default:
    return "";
  }
}

bool is_result_read_fence(std::string_view name) noexcept {
  return starts_with(name, "Kokkos::parallel_reduce: fence due to result") ||
         starts_with(name, "Kokkos::parallel_scan: fence due to result") ||
         starts_with(name,
                     "Kokkos::parallel_reduce: fence after copying values") ||
         (starts_with(name, "Kokkos::Impl::Parallel") &&
          name.find("Result Not Device Accessible") != std::string_view::npos);
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

} // namespace cunumpy::Impl
