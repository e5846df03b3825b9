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
