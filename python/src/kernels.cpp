#include "kernels.hpp"

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

namespace cunumpy::python {
namespace kernels {

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<Kokkos::complex<T>> : std::true_type {};

template <class T> struct Tag { using type = T; };

/// Calls `f(Tag<T>{})` with the C++ element type of `dtype`.
template <class F> void with_type(DType dtype, F&& f) {
  switch (dtype) {
  case DType::bool_:
    return f(Tag<bool>{});
  case DType::int8:
    return f(Tag<std::int8_t>{});
  case DType::int16:
    return f(Tag<std::int16_t>{});
  case DType::int32:
    return f(Tag<std::int32_t>{});
  case DType::int64:
    return f(Tag<std::int64_t>{});
  case DType::uint8:
    return f(Tag<std::uint8_t>{});
  case DType::uint16:
    return f(Tag<std::uint16_t>{});
  case DType::uint32:
    return f(Tag<std::uint32_t>{});
  case DType::uint64:
    return f(Tag<std::uint64_t>{});
  case DType::float32:
    return f(Tag<float>{});
  case DType::float64:
    return f(Tag<double>{});
  case DType::complex64:
    return f(Tag<Kokkos::complex<float>>{});
  case DType::complex128:
    return f(Tag<Kokkos::complex<double>>{});
  }
}

template <class To, class From>
KOKKOS_INLINE_FUNCTION To cast(const From& value) {
  if constexpr (is_complex<To>::value) {
    using Real = typename To::value_type;
    if constexpr (is_complex<From>::value)
      return To(static_cast<Real>(value.real()),
                static_cast<Real>(value.imag()));
    else
      return To(static_cast<Real>(value), Real(0));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else {
    return static_cast<To>(value);
  }
}

/// The offset in an F-ordered array of the element with C-order index `i`.
struct FortranOffset {
  int rank = 0;
  std::size_t extents[max_rank] = {};
  std::size_t strides[max_rank] = {};

  explicit FortranOffset(const Reorder& reorder) : rank(reorder.rank) {
    std::size_t stride = 1;
    for (int d = 0; d < rank; ++d) {
      extents[d] = reorder.extents[d];
      strides[d] = stride;
      stride *= extents[d];
    }
  }

  KOKKOS_INLINE_FUNCTION std::size_t operator()(std::size_t i) const {
    std::size_t offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      offset += (i % extents[d]) * strides[d];
      i /= extents[d];
    }
    return offset;
  }
};

template <class To, class From> struct Convert {
  To* to;
  const From* from;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    to[i] = cast<To>(from[i]);
  }
};

template <class To, class From> struct ConvertFromFortran {
  To* to;
  const From* from;
  FortranOffset offset;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    to[i] = cast<To>(from[offset(i)]);
  }
};

template <class Exec, class To, class From>
void run(void* destination, const void* source, std::size_t count,
         const Reorder& reorder) {
  if constexpr (is_complex<From>::value && !is_complex<To>::value) {
    throw std::invalid_argument("cunumpy: complex to real conversion");
  } else {
    Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>> policy(0, count);
    To* to = static_cast<To*>(destination);
    const From* from = static_cast<const From*>(source);
    if (reorder.rank > 1)
      Kokkos::parallel_for(
          "cunumpy::convert", policy,
          ConvertFromFortran<To, From>{to, from, FortranOffset(reorder)});
    else
      Kokkos::parallel_for("cunumpy::convert", policy,
                           Convert<To, From>{to, from});
    Exec().fence();
  }
}

template <class Exec>
void convert(void* destination, DType to, const void* source, DType from,
             std::size_t count, const Reorder& reorder) {
  with_type(to, [&](auto to_tag) {
    with_type(from, [&](auto from_tag) {
      run<Exec, typename decltype(to_tag)::type,
          typename decltype(from_tag)::type>(destination, source, count,
                                             reorder);
    });
  });
}

} // namespace kernels

bool can_convert(DType to, DType from) {
  return is_complex(to) || !is_complex(from);
}

void convert_on_default_space(void* destination, DType to, const void* source,
                              DType from, std::size_t count,
                              const Reorder& reorder) {
  kernels::convert<Kokkos::DefaultExecutionSpace>(destination, to, source, from,
                                                  count, reorder);
}

void convert_on_host_space(void* destination, DType to, const void* source,
                           DType from, std::size_t count,
                           const Reorder& reorder) {
  kernels::convert<Kokkos::DefaultHostExecutionSpace>(destination, to, source,
                                                      from, count, reorder);
}

} // namespace cunumpy::python
