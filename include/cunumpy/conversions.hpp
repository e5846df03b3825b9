#ifndef CUNUMPY_CONVERSIONS_HPP
#define CUNUMPY_CONVERSIONS_HPP

#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>

namespace cunumpy {
namespace Impl {

/// "to_host" of "cunumpy::to_host": the name reports give a call (the
/// Python module's names are the same), where messages name the function.
constexpr const char* call_name(const char* function) noexcept {
  constexpr const char prefix[] = "cunumpy::";
  for (std::size_t i = 0; i + 1 < sizeof prefix; ++i)
    if (function[i] != prefix[i])
      return function;
  return function + sizeof prefix - 1;
}

/// Converts `view` into `MemorySpace`: the view itself when it already is
/// there, else one copy attributed to `function` ("cunumpy::to_device") at
/// `where`.
template <class MemorySpace, class View>
auto convert(const char* function, const View& view, SourceLocation where) {
  static_assert(Kokkos::is_view<View>::value,
                "cunumpy: conversions take a Kokkos::View or a contiguous "
                "host range such as std::vector");
  require_allocated(view, function, "view");
  if constexpr (std::is_same_v<typename View::memory_space, MemorySpace>) {
    return view;
  } else {
    ensure_hooks();
    const ArrayShape shape = shape_of(view);
    ApiScope scope(call_name(function), where, &shape);
    return copy_into<MemorySpace>(view, function, "view");
  }
}

template <class MemorySpace, class Range>
auto convert_range(const char* function, const Range& range,
                   SourceLocation where) {
  static_assert(!std::is_same_v<range_value_t<Range>, bool>,
                "cunumpy: std::vector<bool> is not contiguous; copy it into a "
                "std::vector<char> or a Kokkos::View<bool*> first");
  return convert<MemorySpace>(function, host_view_of(range), where);
}

template <class Space> using memory_space_of_t = typename Space::memory_space;

} // namespace Impl

/// Returns a host (HostSpace) view of `view` — Python's `to_numpy`.
///
/// A view already in a host memory space is returned as is (same allocation,
/// no copy, no event). Otherwise one device-to-host copy, recorded as
/// `to_host` at the caller's line. LayoutLeft and LayoutRight are kept; a
/// strided view arrives as LayoutRight (packed on the device first, a
/// `device_copy`, unless it already is row-major contiguous). `view` is never
/// modified. Throws std::invalid_argument for an unallocated view.
template <class View, std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
auto to_host(const View& view,
             SourceLocation where = SourceLocation::current()) {
  if constexpr (is_host_memory_space_v<typename View::memory_space>) {
    Impl::require_allocated(view, "cunumpy::to_host", "view");
    return view;
  } else {
    return Impl::convert<Kokkos::HostSpace>("cunumpy::to_host", view, where);
  }
}

/// A contiguous host range (std::vector, std::array, ...) is already on the
/// host: returns an unmanaged host view of its elements, without a copy.
template <class Range,
          std::enable_if_t<Impl::is_contiguous_range<Range>::value, int> = 0>
auto to_host(const Range& range,
             SourceLocation /*where*/ = SourceLocation::current()) {
  return Impl::host_view_of(range);
}

/// Returns a view of `view` in `MemorySpace` (a memory or execution space;
/// default: the memory space of Kokkos::DefaultExecutionSpace) — Python's
/// `to_cupy`.
///
/// A view already in that space is returned as is (no copy, no event; on a
/// host-only Kokkos build every host view). Otherwise one copy, recorded as
/// `to_device` (from the host) or `device_copy` (from another device space)
/// at the caller's line. Layouts follow the rules of to_host.
template <class MemorySpace = default_device_memory_space, class View,
          std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
auto to_device(const View& view,
               SourceLocation where = SourceLocation::current()) {
  return Impl::convert<Impl::memory_space_of_t<MemorySpace>>(
      "cunumpy::to_device", view, where);
}

/// Copies a contiguous host range (std::vector, std::array, ...) into a new
/// rank-1 view of `MemorySpace`: one `to_device` copy (none on a host-only
/// build, where an unmanaged view of the range is returned).
template <class MemorySpace = default_device_memory_space, class Range,
          std::enable_if_t<Impl::is_contiguous_range<Range>::value, int> = 0>
auto to_device(const Range& range,
               SourceLocation where = SourceLocation::current()) {
  return Impl::convert_range<Impl::memory_space_of_t<MemorySpace>>(
      "cunumpy::to_device", range, where);
}

/// Converts `view` to the memory space of the active execution space
/// (default: Kokkos::DefaultExecutionSpace) — Python's `to_cunumpy`: a
/// device copy on a device backend, the view itself on a host backend.
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace, class View,
          std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
auto to_active(const View& view,
               SourceLocation where = SourceLocation::current()) {
  using Target = Impl::memory_space_of_t<ExecutionSpace>;
  if constexpr (is_host_memory_space_v<Target> &&
                is_host_memory_space_v<typename View::memory_space>) {
    Impl::require_allocated(view, "cunumpy::to_active", "view");
    return view;
  } else {
    return Impl::convert<Target>("cunumpy::to_active", view, where);
  }
}

/// to_active of a contiguous host range.
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace, class Range,
          std::enable_if_t<Impl::is_contiguous_range<Range>::value, int> = 0>
auto to_active(const Range& range,
               SourceLocation where = SourceLocation::current()) {
  return Impl::convert_range<Impl::memory_space_of_t<ExecutionSpace>>(
      "to_active", range, where);
}

} // namespace cunumpy

#endif
