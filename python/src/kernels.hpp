#ifndef CUNUMPY_PYTHON_KERNELS_HPP
#define CUNUMPY_PYTHON_KERNELS_HPP

// Element conversions on the device: the one device copy of
// as_device_array() and DeviceArray.astype() for another dtype or an
// F-ordered array.

#include <cstddef>

#include "device_array.hpp"

namespace cunumpy::python {

/// False for complex to real, which would drop the imaginary part.
bool can_convert(DType to, DType from);

/// Writes `count` elements of `source` (type `from`; F-ordered when
/// `reorder.rank` > 1) into `destination` as `to`, in C order, with a kernel
/// in Kokkos::DefaultExecutionSpace; returns after a fence.
void convert_on_default_space(void* destination, DType to, const void* source,
                              DType from, std::size_t count,
                              const Reorder& reorder);
/// The same in Kokkos::DefaultHostExecutionSpace (the fake device's).
void convert_on_host_space(void* destination, DType to, const void* source,
                           DType from, std::size_t count,
                           const Reorder& reorder);

} // namespace cunumpy::python

#endif
