#ifndef CUNUMPY_DLPACK_HPP
#define CUNUMPY_DLPACK_HPP

// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html, the
// stable unversioned structs), for C++ extensions that receive a
// cunumpy.DeviceArray (or any array with __dlpack__) from Python and wrap its
// memory in an unmanaged Kokkos::View without a copy. Declared here because
// dlpack.h is not a dependency of cunumpy.

#include <cstdint>

namespace cunumpy::dlpack {

struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DLDataType {
  std::uint8_t code; ///< 0 int, 1 uint, 2 float, 5 complex, 6 bool
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides; ///< in elements; null for C-contiguous
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

/// Device types cunumpy's arrays report.
inline constexpr std::int32_t cpu = 1;
inline constexpr std::int32_t cuda = 2;
/// DLPack's "extension device": cunumpy's fake device, which no other
/// library can read (NumPy's from_dlpack refuses it as it would a GPU array).
inline constexpr std::int32_t fake_device = 12;

} // namespace cunumpy::dlpack

#endif
