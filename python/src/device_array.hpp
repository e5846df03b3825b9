#ifndef CUNUMPY_PYTHON_DEVICE_ARRAY_HPP
#define CUNUMPY_PYTHON_DEVICE_ARRAY_HPP

// DeviceArray: the "kokkos" backend's device array. Its storage is a 1-D
// Kokkos view of bytes in the device memory space (or in the fake device);
// shape, dtype and order (C or F) are kept beside it. Copies to and from
// NumPy go through Kokkos::deep_copy, so Kokkos Tools sees them and the
// recorder counts them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <pybind11/pybind11.h>
#include <string>
#include <string_view>
#include <vector>

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::Impl {
class CopyCompletion;
}

namespace cunumpy::python {

namespace py = pybind11;

/// The element types the module supports: NumPy's bool, signed and unsigned
/// 8- to 64-bit integers, float32/64 and complex64/128.
enum class DType : std::uint8_t {
  bool_,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64,
  complex64,
  complex128,
};

inline constexpr int dtype_count = 13;
using Impl::max_rank;

struct DTypeInfo {
  const char* name;     ///< NumPy's name: "float64"
  std::size_t itemsize; ///< bytes per element
  char kind;            ///< NumPy's kind: 'b', 'i', 'u', 'f', 'c'
  std::uint8_t dlpack;  ///< DLPack type code
  const char* typestr;  ///< __array_interface__ type string: "<f8"
};

const DTypeInfo& info(DType dtype);
/// The dtype called `name` ("float64"); throws TypeError naming `function`
/// and listing the supported dtypes for any other name.
DType parse_dtype(std::string_view name, std::string_view function);
bool is_complex(DType dtype);

/// Where new device arrays go: the device space of this Kokkos build
/// (HostSpace on a host-only build) or the fake device.
enum class SpaceKind : std::uint8_t { device, fake_device };

SpaceKind current_space();
void set_current_space(SpaceKind kind);
/// True when arrays of `kind` live in host memory (the device space of a
/// host-only build): conversions to it are no-ops.
bool is_host_space(SpaceKind kind);
/// The Kokkos name of the memory space of `kind`: "FakeDevice", "Cuda"...
const char* space_name(SpaceKind kind);

/// The shape and dtype of an array, for event descriptions.
Impl::ArrayShape array_shape(const std::vector<std::int64_t>& shape,
                             DType dtype);

/// Index mapping of an F-ordered source read in C order.
struct Reorder {
  int rank = 0;
  std::size_t extents[max_rank] = {};
};

/// The storage of a DeviceArray: a Kokkos view of bytes in one memory space.
/// Every storage is registered, so that the views can be released before
/// Kokkos::finalize while Python still holds arrays.
class Storage {
public:
  Storage();
  virtual ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  virtual unsigned char* data() const = 0;
  virtual std::size_t nbytes() const = 0;
  virtual SpaceKind kind() const = 0;
  virtual std::string label() const = 0;
  /// True for storage in host memory (HostSpace), which NumPy may alias.
  virtual bool host_accessible() const = 0;
  /// True when the host can address the bytes: host memory, and the fake
  /// device (host memory under a device's name), whose array operations
  /// NumPy runs in place.
  bool host_addressable() const {
    return host_accessible() || kind() == SpaceKind::fake_device;
  }

  /// Copies nbytes() from host memory at `source` (Kokkos::deep_copy).
  virtual void copy_from_host(void* source) = 0;
  /// Copies nbytes() into host memory at `destination` (Kokkos::deep_copy).
  virtual void copy_to_host(void* destination) const = 0;
  /// Queues the copy of nbytes() into `destination` (page-locked host memory,
  /// see pinned_buffer, for the copy to overlap) after the work queued so far
  /// on the device, on an instance of its own (cunumpy::to_host_async's
  /// path), without waiting. Must run inside an asynchronous ApiScope.
  virtual Impl::CopyCompletion copy_to_host_async(void* destination) const = 0;
  /// A new storage of `nbytes` in the same space.
  virtual std::shared_ptr<Storage>
  allocate(std::size_t nbytes, const std::string& label, bool zero) const = 0;
  /// Writes the elements of this storage (`from`, in F order when `reorder`
  /// has a rank) into `destination` (same space) as `to`, in C order: a
  /// kernel in the space's execution space, announced to Kokkos Tools as a
  /// deep copy.
  virtual void convert_into(Storage& destination, DType to, DType from,
                            const Reorder& reorder) const = 0;
  /// Frees the view (before Kokkos::finalize); the storage is empty after.
  virtual void release() noexcept = 0;

  bool released() const noexcept { return released_; }

protected:
  bool released_ = false;
};

/// New storage of `nbytes` in `kind`, zero-filled when `zero`. A failed
/// allocation is a MemoryError naming `what` (the call and the shape).
std::shared_ptr<Storage> allocate_storage(SpaceKind kind, std::size_t nbytes,
                                          const std::string& label, bool zero,
                                          std::string_view what = {});
/// Raises MemoryError: `what` could not get `nbytes` in `space`.
[[noreturn]] void throw_allocation_failure(std::string_view what,
                                           std::size_t nbytes,
                                           const char* space);
/// Storage over existing host memory (no copy), keeping `owner` alive: the
/// device arrays of a host-only build alias NumPy arrays, as the C++
/// conversions return host views as they are.
std::shared_ptr<Storage> alias_host_memory(void* data, std::size_t nbytes,
                                           py::object owner);
/// Storage over existing memory of the memory space of `kind` (CuPy's on a
/// CUDA build, NumPy's on the fake device, whose memory is host memory),
/// keeping `owner` alive.
std::shared_ptr<Storage> alias_device_memory(SpaceKind kind, void* data,
                                             std::size_t nbytes,
                                             py::object owner);
/// Frees every live view; called before Kokkos::finalize.
void release_all_storage() noexcept;
std::size_t live_storage_count() noexcept;

/// Announces to Kokkos Tools a copy that Kokkos does not make itself (a
/// conversion kernel, a CuPy copy), so that every tool, the recorder
/// included, sees it as a deep copy between the named spaces.
void begin_announced_copy(const char* dst_space, const std::string& dst_label,
                          const void* dst, const char* src_space,
                          const std::string& src_label, const void* src,
                          std::uint64_t nbytes);
void end_announced_copy();

class DeviceArray {
public:
  DeviceArray(std::shared_ptr<Storage> storage, std::vector<std::int64_t> shape,
              DType dtype, bool fortran);

  const std::shared_ptr<Storage>& storage() const;
  const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  int ndim() const noexcept { return static_cast<int>(shape_.size()); }
  DType dtype() const noexcept { return dtype_; }
  std::size_t size() const noexcept;
  std::size_t nbytes() const noexcept { return size() * info(dtype_).itemsize; }
  std::size_t itemsize() const noexcept { return info(dtype_).itemsize; }
  /// Stored in column-major order (and not also row-major contiguous).
  bool fortran() const noexcept { return fortran_; }
  std::vector<std::int64_t> strides() const;
  bool c_contiguous() const;
  bool f_contiguous() const;

  /// Shape and dtype for event descriptions.
  Impl::ArrayShape array_shape() const;

private:
  std::shared_ptr<Storage> storage_;
  std::vector<std::int64_t> shape_;
  DType dtype_;
  bool fortran_;
};

/// The shape of a Python int or sequence of ints (anything with
/// __index__); ValueError naming `function` and the shape for anything else:
/// extents that are not integers, negative or beyond 64 bits, more than 8
/// dimensions.
std::vector<std::int64_t> parse_shape(const py::handle& shape,
                                      std::string_view function);

/// "(2, 3)", "(5,)", "()": a shape as Python writes a tuple.
std::string shape_repr(const std::vector<std::int64_t>& shape);

/// `a * b`, or false when the product does not fit in std::int64_t (both
/// non-negative).
bool checked_multiply(std::int64_t a, std::int64_t b, std::int64_t& product);

/// The bytes of an array of `shape` with items of `itemsize`: ValueError
/// naming `function` and the shape when its element or byte count does not
/// fit in std::int64_t. Call it before allocating anything for the shape.
std::size_t checked_nbytes(const std::vector<std::int64_t>& shape,
                           std::size_t itemsize, std::string_view function);

/// True when `shape` with these byte strides is C (or F) contiguous, as NumPy
/// decides it: extents of 1 do not matter, empty arrays are contiguous.
bool is_contiguous(const std::vector<std::int64_t>& shape,
                   const std::vector<std::int64_t>& strides,
                   std::size_t itemsize, bool fortran);

} // namespace cunumpy::python

#endif
