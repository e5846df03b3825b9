// Copies between NumPy buffers and DeviceArrays, attributed to the Python
// caller. The Python package decides when to copy (docs/conversions.md); these
// functions make the one copy, through Kokkos, inside an ApiScope. Copies to
// the host without waiting (to_host_async, HostStaging.copy) are made the
// way cunumpy::to_host_async makes them: after the work queued so far, on an
// instance of their own, into page-locked memory.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <string>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/pin_memory.hpp>
#include <cunumpy/to_host_async.hpp>

#include "call_site.hpp"
#include "device_array.hpp"
#include "kernels.hpp"
#include "module.hpp"

namespace cunumpy::python {
namespace {

/// Copies of at least this size run with the GIL released.
constexpr std::size_t release_gil_bytes = std::size_t(1) << 20;

class MaybeReleaseGil {
public:
  explicit MaybeReleaseGil(std::size_t nbytes) {
    if (nbytes >= release_gil_bytes)
      release_.emplace();
  }

private:
  std::optional<py::gil_scoped_release> release_;
};

std::vector<std::int64_t> shape_of(const py::buffer_info& buffer) {
  return std::vector<std::int64_t>(buffer.shape.begin(), buffer.shape.end());
}

/// Checks that `buffer` holds `dtype` elements, contiguous in the order
/// `fortran` says.
void require_contiguous(const py::buffer_info& buffer, DType dtype,
                        bool fortran, const std::string& function) {
  if (buffer.itemsize != static_cast<py::ssize_t>(info(dtype).itemsize))
    throw py::type_error(function + ": buffer items of " +
                         std::to_string(buffer.itemsize) + " bytes for dtype " +
                         info(dtype).name);
  if (buffer.ndim > max_rank)
    throw py::value_error(function + ": rank " + std::to_string(buffer.ndim) +
                          " is not supported (at most 8 dimensions)");
  std::vector<std::int64_t> strides(buffer.strides.begin(),
                                    buffer.strides.end());
  if (!is_contiguous(shape_of(buffer), strides, info(dtype).itemsize, fortran))
    throw py::value_error(function + ": the host buffer is not " +
                          (fortran ? "F" : "C") + "-contiguous");
}

std::string default_label(const std::string& api) {
  return "cunumpy::" + api;
}

/// One host-to-device copy of the NumPy buffer `source` into a new
/// DeviceArray in the current device space. On a host-only build the array
/// aliases `source` (no copy), as the C++ conversions return host views.
DeviceArray to_device(const py::buffer& source, const std::string& dtype_name,
                      bool fortran, const std::string& api,
                      const std::optional<std::string>& label) {
  const DType dtype = parse_dtype(dtype_name, api);
  py::buffer_info buffer = source.request();
  require_contiguous(buffer, dtype, fortran, api);
  const std::size_t nbytes =
      checked_nbytes(shape_of(buffer), info(dtype).itemsize, api);
  const SpaceKind kind = current_space();
  if (is_host_space(kind) && !buffer.readonly)
    return DeviceArray(alias_host_memory(buffer.ptr, nbytes, source),
                       shape_of(buffer), dtype, fortran);
  // The scope covers the allocation: Kokkos' fences there are the call's.
  const auto shape = shape_of(buffer);
  const std::string what = describe(api, array_shape(shape, dtype));
  PythonApiScope scope(what);
  auto storage = allocate_storage(
      kind, nbytes, label.value_or(default_label(api)), false, what);
  DeviceArray array(storage, shape, dtype, fortran);
  MaybeReleaseGil unlocked(nbytes);
  storage->copy_from_host(buffer.ptr);
  return array;
}

/// The buffer of `host`, checked to be contiguous with the dtype, shape and
/// order of `array` (and writable when `writable`).
py::buffer_info host_buffer_for(const DeviceArray& array,
                                const py::buffer& host, bool writable,
                                const std::string& api) {
  py::buffer_info buffer = host.request(writable);
  require_contiguous(buffer, array.dtype(), array.fortran(), api);
  if (shape_of(buffer) != array.shape())
    throw py::value_error(api + ": the host buffer has another shape");
  return buffer;
}

/// One device-to-host copy of `array` into the writable NumPy buffer `out`
/// (same dtype, shape and order); without waiting: to_host_async below.
void to_host(const DeviceArray& array, const py::buffer& out,
             const std::string& api) {
  const py::buffer_info buffer = host_buffer_for(array, out, true, api);
  const auto& storage = array.storage();
  PythonApiScope scope(describe(api, array.array_shape()));
  MaybeReleaseGil unlocked(array.nbytes());
  storage->copy_to_host(buffer.ptr);
}

/// One host-to-device copy of `source` into the existing `array`, in place.
void copy_into(const DeviceArray& array, const py::buffer& source,
               const std::string& api) {
  const py::buffer_info buffer = host_buffer_for(array, source, false, api);
  const auto& storage = array.storage();
  PythonApiScope scope(describe(api, array.array_shape()));
  MaybeReleaseGil unlocked(array.nbytes());
  storage->copy_from_host(buffer.ptr);
}

/// One device copy of `array` as `dtype_name`, C-contiguous, in its space.
DeviceArray convert(const DeviceArray& array, const std::string& dtype_name,
                    const std::string& api,
                    const std::optional<std::string>& label) {
  const DType to = parse_dtype(dtype_name, api);
  const DType from = array.dtype();
  if (!can_convert(to, from))
    throw py::type_error(api + ": cannot convert " + info(from).name + " to " +
                         info(to).name +
                         " on the device, the imaginary part would be lost; "
                         "take the real part on the host or in a kernel");
  const auto& source = array.storage();
  const std::size_t nbytes =
      checked_nbytes(array.shape(), info(to).itemsize, api);
  PythonApiScope scope(describe(api, array.array_shape()));
  auto storage =
      source->allocate(nbytes, label.value_or(default_label(api)), false);
  Reorder reorder;
  if (array.fortran()) {
    reorder.rank = array.ndim();
    for (int d = 0; d < reorder.rank; ++d)
      reorder.extents[d] = static_cast<std::size_t>(array.shape()[d]);
  }
  DeviceArray result(storage, array.shape(), to, false);
  MaybeReleaseGil unlocked(array.nbytes());
  source->convert_into(*storage, to, from, reorder);
  return result;
}

/// A DeviceArray in the current device space over memory another library
/// owns (a CuPy array on a CUDA build, a NumPy array on the fake device),
/// keeping `owner` alive: no copy.
DeviceArray wrap_device_memory(std::uintptr_t pointer, const py::object& shape,
                               const std::string& dtype_name, bool fortran,
                               py::object owner) {
  const DType dtype = parse_dtype(dtype_name, "wrap_device_memory");
  auto extents = parse_shape(shape, "wrap_device_memory");
  const std::size_t nbytes =
      checked_nbytes(extents, info(dtype).itemsize, "wrap_device_memory");
  auto storage =
      alias_device_memory(current_space(), reinterpret_cast<void*>(pointer),
                          nbytes, std::move(owner));
  return DeviceArray(std::move(storage), std::move(extents), dtype, fortran);
}

std::string numpy_dtype_name(const py::object& dtype) {
  return py::str(py::module_::import("numpy").attr("dtype")(dtype).attr("name"))
      .cast<std::string>();
}

/// A copy to the host under way: ready() asks without waiting, wait()
/// waits and records the wait as a sync at the Python caller. Keeps the
/// device array and the host buffer alive until the copy has finished.
class AsyncCopy {
public:
  AsyncCopy(Impl::CopyCompletion completion, std::shared_ptr<Storage> source,
            py::object destination)
      : completion_(std::move(completion)), source_(std::move(source)),
        destination_(std::move(destination)) {}

  bool ready() {
    if (!finished_ && completion_.ready())
      finish();
    return finished_;
  }

  void wait(const std::string& api) {
    if (ready())
      return;
    const PythonSite site = python_caller();
    Impl::SyncScope scope(api, SourceLocation{site.file.c_str(), site.line,
                                              site.function.c_str()});
    {
      py::gil_scoped_release unlocked;
      completion_.wait();
    }
    finish();
  }

private:
  void finish() {
    finished_ = true;
    source_.reset();
    destination_ = py::object();
  }

  Impl::CopyCompletion completion_;
  std::shared_ptr<Storage> source_;
  py::object destination_;
  bool finished_ = false;
};

/// Starts the copy of `array` into the writable, C- or F-contiguous buffer
/// `out` (its shape and dtype), recorded as a non-blocking to_host at the
/// Python caller described as `api(...)`. The copy overlaps the host only
/// when `out` is page-locked (pinned_buffer).
AsyncCopy to_host_async(const DeviceArray& array, const py::buffer& out,
                        const std::string& api) {
  const py::buffer_info buffer = host_buffer_for(array, out, true, api);
  const auto& storage = array.storage();
  PythonApiScope scope(describe(api, array.array_shape()), /*async=*/true);
  return AsyncCopy(storage->copy_to_host_async(buffer.ptr), storage, out);
}

/// A 1-D uint8 NumPy array of `nbytes` in page-locked host memory (ordinary
/// host memory on a build without a device), which the copies to the host
/// can fill while the host runs on.
py::array pinned_buffer(const py::object& size) {
  const auto shape = parse_shape(size, "pinned_buffer");
  if (shape.size() != 1)
    throw py::value_error("pinned_buffer: the size is one number of bytes");
  const std::size_t nbytes = checked_nbytes(shape, 1, "pinned_buffer");
  using Pinned = Kokkos::View<unsigned char*, pinned_memory_space>;
  Pinned* view = nullptr;
  try {
    view = new Pinned(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                         "cunumpy::pinned_buffer"),
                      nbytes);
  } catch (const std::exception&) {
    throw_allocation_failure("pinned memory of shape " + shape_repr(shape) +
                                 " (uint8)",
                             nbytes, pinned_memory_space::name());
  }
  py::capsule owner(view, [](void* pointer) {
    // A buffer that outlives Kokkos (held past finalize) is not freed.
    if (Kokkos::is_initialized())
      delete static_cast<Pinned*>(pointer);
  });
  return py::array(py::dtype("uint8"), {nbytes}, {1}, view->data(), owner);
}

/// A 64-byte uint8 NumPy array in page-locked memory from the pool that
/// cunumpy::to_host_async reads scalars into: reading a value per
/// iteration allocates nothing once warm. The block goes back to the pool
/// when the array is collected.
py::array pinned_scalar_buffer() {
  using Slot = Impl::PinnedScalarSlot;
  auto* slot = new Slot(Slot::acquire());
  py::capsule owner(slot,
                    [](void* pointer) { delete static_cast<Slot*>(pointer); });
  return py::array(py::dtype("uint8"), {Slot::capacity}, {1}, slot->data(),
                   owner);
}

/// describe_call(api, shape, dtype): how reports describe a call of
/// cunumpy's, the same text the C++ front end makes.
std::string describe_call(const std::string& api,
                          const std::vector<std::int64_t>& shape,
                          const std::string& dtype) {
  if (shape.size() > static_cast<std::size_t>(Impl::max_rank))
    throw py::value_error(
        "cunumpy.describe_call: a shape of " + std::to_string(shape.size()) +
        " dimensions; at most " + std::to_string(Impl::max_rank));
  Impl::ArrayShape array;
  array.rank = static_cast<int>(shape.size());
  for (int d = 0; d < array.rank; ++d)
    array.extents[d] = static_cast<std::size_t>(shape[d]);
  array.dtype = dtype.c_str(); // read before this function returns
  return Impl::describe_call(api, &array);
}

} // namespace

void bind_conversions(py::module_& module) {
  module.def("describe_call", &describe_call, py::arg("api"), py::arg("shape"),
             py::arg("dtype"),
             "'to_cupy(shape=(100000,), dtype=float64)': how reports describe "
             "a call of cunumpy's, as the C++ front end writes it.");
  module.def("to_device", &to_device, py::arg("source"), py::arg("dtype"),
             py::arg("fortran"), py::arg("api"), py::arg("label") = py::none(),
             "Copies a contiguous host buffer into a new DeviceArray.");
  py::class_<AsyncCopy>(module, "AsyncCopy",
                        "A copy to the host under way (see to_host_async).")
      .def("ready", &AsyncCopy::ready,
           "True once the copy has finished; never waits.")
      .def("wait", &AsyncCopy::wait, py::arg("api"),
           "Waits for the copy, recorded as a sync described as `api`.")
      .def_static(
          "fenced",
          [] {
            return AsyncCopy(
                Impl::CopyCompletion(Kokkos::DefaultExecutionSpace()), nullptr,
                py::none());
          },
          "A copy whose end is known only by fencing the device (backends "
          "without event queries): not ready until waited for.");
  module.def("to_host_async", &to_host_async, py::arg("array"), py::arg("out"),
             py::arg("api"),
             "Starts copying a DeviceArray into a host buffer; an AsyncCopy.");
  module.def("pinned_buffer", &pinned_buffer, py::arg("nbytes"),
             "A uint8 NumPy array in page-locked host memory.");
  module.def("pinned_scalar_buffer", &pinned_scalar_buffer,
             "64 page-locked bytes from a pool, for one scalar.");
  module.def("to_host", &to_host, py::arg("array"), py::arg("out"),
             py::arg("api"), "Copies a DeviceArray into a host buffer.");
  module.def("copy_into", &copy_into, py::arg("array"), py::arg("source"),
             py::arg("api"),
             "Copies a host buffer into an existing DeviceArray.");
  module.def("convert", &convert, py::arg("array"), py::arg("dtype"),
             py::arg("api"), py::arg("label") = py::none(),
             "One device copy: another dtype, C-contiguous.");

  module.def("wrap_device_memory", &wrap_device_memory, py::arg("pointer"),
             py::arg("shape"), py::arg("dtype"), py::arg("fortran"),
             py::arg("owner"),
             "A DeviceArray in the current device space over memory owned by "
             "`owner` (no copy).");

  auto device_array = py::reinterpret_borrow<py::class_<DeviceArray>>(
      module.attr("DeviceArray"));
  device_array.def(
      "astype",
      [](const DeviceArray& array, const py::object& dtype) {
        return convert(array, numpy_dtype_name(dtype), "astype", std::nullopt);
      },
      py::arg("dtype"),
      "A C-contiguous copy with elements of `dtype`, made on the device (one "
      "device_copy).");
  device_array.def(
      "copy",
      [](const DeviceArray& array) {
        return convert(array, info(array.dtype()).name, "copy", std::nullopt);
      },
      "A C-contiguous copy made on the device (one device_copy).");
}

} // namespace cunumpy::python
