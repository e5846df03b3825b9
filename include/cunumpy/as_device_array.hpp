#ifndef CUNUMPY_AS_DEVICE_ARRAY_HPP
#define CUNUMPY_AS_DEVICE_ARRAY_HPP

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>

namespace cunumpy {

/// The view as_device_array<T, Rank, MemorySpace> returns: contiguous,
/// LayoutRight, in the device space.
template <class T, int Rank, class MemorySpace = default_device_memory_space>
using device_array_t =
    Kokkos::View<typename Impl::add_rank<T, Rank>::type, Kokkos::LayoutRight,
                 typename MemorySpace::memory_space>;

namespace Impl {

[[noreturn]] void throw_no_device_backend(const char* function,
                                          const char* name);
[[noreturn]] void throw_rank_mismatch(const char* function, const char* name,
                                      int rank, int expected);
[[noreturn]] void throw_dtype_mismatch(const char* function, const char* name,
                                       const char* dtype, const char* expected);

template <class T, int Rank, class MemorySpace, class View>
device_array_t<T, Rank, MemorySpace>
device_array_from_view(const View& value, const char* name,
                       SourceLocation where) {
  using Result = device_array_t<T, Rank, MemorySpace>;
  using Space = typename Result::memory_space;
  using Source = typename View::value_type;
  constexpr const char* function = "cunumpy::as_device_array";
  if constexpr (rank_v<View> != Rank) {
    throw_rank_mismatch(function, name, rank_v<View>, Rank);
  } else if constexpr (!std::is_convertible_v<Source, T>) {
    throw_dtype_mismatch(function, name, dtype_name<Source>(), dtype_name<T>());
  } else {
    require_allocated(value, function, name);
    constexpr bool same_type = std::is_same_v<Source, T>;
    constexpr bool in_space =
        std::is_same_v<typename View::memory_space, Space>;
    using Layout = typename View::array_layout;
    constexpr bool row_major_layout =
        std::is_same_v<Layout, Kokkos::LayoutRight> ||
        (Rank <= 1 && std::is_same_v<Layout, Kokkos::LayoutLeft>);
    if constexpr (same_type && in_space && row_major_layout) {
      if (value.span_is_contiguous())
        return value; // the caller's own array: kernels write into it
    }
    (void)allocation_bytes<T>(function, name, value);
    ensure_hooks();
    const ArrayShape shape = shape_of(value);
    ApiScope scope("as_device_array", where, &shape);
    // Exactly one copy reaches the device: type conversion and packing happen
    // on the side the data is on (a device_copy when that is the device).
    using Packed =
        Kokkos::View<typename add_rank<T, Rank>::type, Kokkos::LayoutRight,
                     typename View::memory_space>;
    const auto alloc =
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(name));
    if constexpr (in_space) {
      Result result(alloc, unpadded_layout<Kokkos::LayoutRight>(value));
      deep_copy_from(result, value);
      return result;
    } else if constexpr (same_type &&
                         std::is_same_v<Layout, Kokkos::LayoutRight>) {
      if (value.span_is_contiguous()) {
        Result result(alloc, unpadded_layout<Kokkos::LayoutRight>(value));
        deep_copy_from(result, value);
        return result;
      }
    }
    if constexpr (!in_space) {
      Packed packed(alloc, unpadded_layout<Kokkos::LayoutRight>(value));
      deep_copy_from(packed, value);
      Result result(alloc, unpadded_layout<Kokkos::LayoutRight>(value));
      Kokkos::deep_copy(result, packed);
      return result;
    }
  }
}

} // namespace Impl

/// Returns a contiguous LayoutRight view of `T` and rank `Rank` in the device
/// space for `value`, copying only what is not already in that form.
///
/// - A contiguous LayoutRight view of `T` in the device space is returned
///   itself (same allocation: kernels write into the caller's array).
/// - Anything else (a host view, another element type, a strided or
///   LayoutLeft view) becomes exactly one contiguous device copy, recorded at
///   the caller's line.
///
/// Build such arrays once, when the object holding kernel arguments is made.
/// `name` names the argument in errors and labels the copy. Throws
/// std::runtime_error on a host-only backend (host data is never copied to a
/// device by accident) and std::invalid_argument for a rank or element type
/// that does not match, or an unallocated view.
template <class T, int Rank, class MemorySpace = default_device_memory_space,
          class View, std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
device_array_t<T, Rank, MemorySpace>
as_device_array(const View& value, const char* name,
                SourceLocation where = SourceLocation::current()) {
  if constexpr (is_host_memory_space_v<typename MemorySpace::memory_space>) {
    Impl::throw_no_device_backend("cunumpy::as_device_array", name);
  } else {
    return Impl::device_array_from_view<T, Rank, MemorySpace>(value, name,
                                                              where);
  }
}

/// A contiguous host range (std::vector, std::array): one device copy.
template <class T, int Rank, class MemorySpace = default_device_memory_space,
          class Range,
          std::enable_if_t<Impl::is_contiguous_range<Range>::value, int> = 0>
device_array_t<T, Rank, MemorySpace>
as_device_array(const Range& value, const char* name,
                SourceLocation where = SourceLocation::current()) {
  return as_device_array<T, Rank, MemorySpace>(Impl::host_view_of(value), name,
                                               where);
}

/// A list of values such as `{3, 3, 3}`: one rank-1 device copy.
template <class T, int Rank, class MemorySpace = default_device_memory_space>
device_array_t<T, Rank, MemorySpace>
as_device_array(std::initializer_list<T> value, const char* name,
                SourceLocation where = SourceLocation::current()) {
  return as_device_array<T, Rank, MemorySpace>(
      Kokkos::View<const T*, Kokkos::HostSpace,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>(value.begin(),
                                                            value.size()),
      name, where);
}

} // namespace cunumpy

#endif
