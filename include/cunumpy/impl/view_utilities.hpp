#ifndef CUNUMPY_IMPL_VIEW_UTILITIES_HPP
#define CUNUMPY_IMPL_VIEW_UTILITIES_HPP

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::Impl {

template <class View>
inline constexpr int rank_v = static_cast<int>(View::rank);

/// LayoutLeft stays LayoutLeft; LayoutRight and LayoutStride become
/// LayoutRight (the documented "F-contiguous stays F-contiguous, everything
/// else arrives C-contiguous").
template <class Layout>
using kept_layout_t =
    std::conditional_t<std::is_same_v<Layout, Kokkos::LayoutLeft>,
                       Kokkos::LayoutLeft, Kokkos::LayoutRight>;

/// The view a conversion of `View` into `MemorySpace` returns.
template <class View, class MemorySpace>
using converted_view_t =
    Kokkos::View<typename View::non_const_data_type,
                 kept_layout_t<typename View::array_layout>, MemorySpace>;

/// `T*` with `Rank` stars.
template <class T, int Rank> struct add_rank {
  using type = typename add_rank<T, Rank - 1>::type*;
};
template <class T> struct add_rank<T, 0> { using type = T; };

/// A `Layout` (LayoutLeft or LayoutRight) with the extents of `view` and no
/// padding.
template <class Layout, class View> Layout unpadded_layout(const View& view) {
  constexpr int rank = rank_v<View>;
  auto e = [&](int i) -> std::size_t {
    return i < rank ? view.extent(i) : KOKKOS_IMPL_CTOR_DEFAULT_ARG;
  };
  return Layout(e(0), e(1), e(2), e(3), e(4), e(5), e(6), e(7));
}

template <class View> ArrayShape shape_of(const View& view) {
  ArrayShape shape;
  shape.rank = rank_v<View>;
  for (int i = 0; i < shape.rank; ++i)
    shape.extents[i] = view.extent(i);
  shape.dtype = dtype_name<typename View::value_type>();
  return shape;
}

/// True when the elements of `view` are contiguous in row-major order.
template <class View> bool is_row_major_contiguous(const View& view) {
  if constexpr (std::is_same_v<typename View::array_layout,
                               Kokkos::LayoutRight>) {
    return view.span_is_contiguous();
  } else {
    constexpr int rank = rank_v<View>;
    std::size_t expected = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (view.extent(i) > 1 && view.stride(i) != expected)
        return false;
      expected *= view.extent(i);
    }
    return true;
  }
}

[[noreturn]] void throw_unallocated(const char* function, const char* argument,
                                    const std::string& label);

/// Throws std::invalid_argument naming `function` and `argument` when `view`
/// has elements but no memory (a default-constructed view).
template <class View>
void require_allocated(const View& view, const char* function,
                       const char* argument) {
  if (view.data() == nullptr &&
      (view.size() > 0 || rank_v<View> == 0 || !view.is_allocated()))
    throw_unallocated(function, argument,
                      view.is_allocated() ? std::string(view.label()) : "");
}

[[noreturn]] void throw_allocation_too_large(const char* function,
                                             const char* argument,
                                             const std::string& label,
                                             const ArrayShape& shape,
                                             bool overflows);

/// The bytes of a new allocation of elements of `T` with the extents of
/// `view`, checked before anything is allocated: throws
/// std::invalid_argument naming `function`, `argument` and the shape when
/// the element count or the byte count overflows std::size_t (an unmanaged
/// view made with wrong extents, whose size() wrapped around), and
/// std::length_error when the bytes fit but no allocation can have that
/// many (more than PTRDIFF_MAX).
template <class T, class View>
std::size_t allocation_bytes(const char* function, const char* argument,
                             const View& view) {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  std::size_t count = 1;
  bool overflows = false;
  for (int i = 0; i < rank_v<View>; ++i) {
    const std::size_t extent = view.extent(i);
    if (extent == 0)
      return 0; // empty, whatever the other extents
    if (count > max / extent)
      overflows = true;
    else
      count *= extent;
  }
  overflows = overflows || count > max / sizeof(T);
  if (overflows ||
      count * sizeof(T) >
          std::size_t(std::numeric_limits<std::ptrdiff_t>::max())) {
    ArrayShape shape = shape_of(view);
    shape.dtype = dtype_name<T>();
    throw_allocation_too_large(function, argument,
                               view.is_allocated() ? std::string(view.label())
                                                   : std::string(),
                               shape, overflows);
  }
  return count * sizeof(T);
}

/// Contiguous host ranges: std::vector, std::array, spans.
template <class Range, class = void>
struct is_contiguous_range : std::false_type {};
template <class Range>
struct is_contiguous_range<
    Range, std::void_t<decltype(std::data(std::declval<const Range&>())),
                       decltype(std::size(std::declval<const Range&>()))>>
    : std::bool_constant<!Kokkos::is_view<Range>::value> {};

template <class Range>
using range_value_t = std::remove_cv_t<
    std::remove_pointer_t<decltype(std::data(std::declval<const Range&>()))>>;

/// An unmanaged host view over a contiguous range (no copy).
template <class Range> auto host_view_of(const Range& range) {
  using T = std::remove_pointer_t<decltype(std::data(range))>;
  return Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      std::data(range), std::size(range));
}

/// The view to give Kokkos::deep_copy as the source: `src` itself, or, on
/// Kokkos 3, a non-const alias of a const `src`: Kokkos 3's logical memory
/// spaces (the fake device) only copy from non-const sources. The data is
/// never written.
template <class Src> auto copy_source(const Src& src) {
#if KOKKOS_VERSION < 40000
  if constexpr (std::is_const_v<typename Src::value_type>) {
    using Alias =
        Kokkos::View<typename Src::non_const_data_type,
                     typename Src::array_layout, typename Src::memory_space,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    return Alias(const_cast<typename Src::non_const_value_type*>(src.data()),
                 src.layout());
  } else
#endif
  {
    return src;
  }
}

/// Kokkos::deep_copy(dst, src) for any source (see copy_source).
template <class Dst, class Src>
void deep_copy_from(const Dst& dst, const Src& src) {
  Kokkos::deep_copy(dst, copy_source(src));
}

/// Copies `src` into a new view of `MemorySpace` with the kept layout.
/// Must run inside an ApiScope so the copies are attributed to the caller.
/// A strided view is packed on its own side first unless it already is
/// row-major contiguous. `function` and `argument` name the caller and
/// `src` in the error of a shape too large to allocate (allocation_bytes).
template <class MemorySpace, class View>
auto copy_into(const View& src, const char* function, const char* argument) {
  using Layout = typename View::array_layout;
  using Result = converted_view_t<View, MemorySpace>;
  using ResultLayout = typename Result::array_layout;
  (void)allocation_bytes<typename Result::value_type>(function, argument, src);
  const auto alloc =
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(src.label()));
  Result result(alloc, unpadded_layout<ResultLayout>(src));
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutStride>) {
    using Packed =
        Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight,
                     typename View::memory_space>;
    using Alias = Kokkos::View<typename View::const_data_type,
                               Kokkos::LayoutRight, typename View::memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    if (is_row_major_contiguous(src)) {
      deep_copy_from(
          result, Alias(src.data(), unpadded_layout<Kokkos::LayoutRight>(src)));
    } else {
      Packed packed(alloc, unpadded_layout<Kokkos::LayoutRight>(src));
      deep_copy_from(packed, src);
      Kokkos::deep_copy(result, packed);
    }
  } else {
    deep_copy_from(result, src);
  }
  return result;
}

} // namespace cunumpy::Impl

#endif
