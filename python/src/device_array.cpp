#include "device_array.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <complex>
#include <limits>
#include <mutex>
#include <new>
#include <pybind11/stl.h>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include <Kokkos_Core.hpp>

#include <cunumpy/dlpack.hpp>
#include <cunumpy/pin_memory.hpp>
#include <cunumpy/spaces.hpp>
#include <cunumpy/testing/fake_device.hpp>
#include <cunumpy/to_host_async.hpp>

#include "kernels.hpp"
#include "module.hpp"

namespace cunumpy::python {
namespace {

// The names are the core's (Impl::dtype_name, which reports use).
using Impl::dtype_name;
constexpr std::array<DTypeInfo, dtype_count> dtype_table = {{
    {dtype_name<bool>(), 1, 'b', 6, "|b1"},
    {dtype_name<std::int8_t>(), 1, 'i', 0, "|i1"},
    {dtype_name<std::int16_t>(), 2, 'i', 0, "<i2"},
    {dtype_name<std::int32_t>(), 4, 'i', 0, "<i4"},
    {dtype_name<std::int64_t>(), 8, 'i', 0, "<i8"},
    {dtype_name<std::uint8_t>(), 1, 'u', 1, "|u1"},
    {dtype_name<std::uint16_t>(), 2, 'u', 1, "<u2"},
    {dtype_name<std::uint32_t>(), 4, 'u', 1, "<u4"},
    {dtype_name<std::uint64_t>(), 8, 'u', 1, "<u8"},
    {dtype_name<float>(), 4, 'f', 2, "<f4"},
    {dtype_name<double>(), 8, 'f', 2, "<f8"},
    {dtype_name<std::complex<float>>(), 8, 'c', 5, "<c8"},
    {dtype_name<std::complex<double>>(), 16, 'c', 5, "<c16"},
}};

std::atomic<SpaceKind> active_space{SpaceKind::device};

std::mutex registry_mutex;
std::unordered_set<Storage*>& registry() {
  static auto* storages = new std::unordered_set<Storage*>();
  return *storages;
}

/// Kokkos reports a failed allocation as std::bad_alloc or (Kokkos 3.x, a
/// std::runtime_error) "Kokkos failed to allocate memory ...", with a
/// message about its own internals.
bool is_allocation_failure(const std::exception& error) {
  return dynamic_cast<const std::bad_alloc*>(&error) != nullptr ||
         std::string_view(error.what()).find("failed to allocate") !=
             std::string_view::npos;
}

template <class MemorySpace> class ViewStorage final : public Storage {
  using View = Kokkos::View<unsigned char*, MemorySpace>;
  using HostView = Kokkos::View<unsigned char*, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Exec = typename MemorySpace::execution_space;

public:
  ViewStorage(SpaceKind kind, const std::string& label, std::size_t nbytes,
              bool zero)
      : kind_(kind),
        view_(zero
                  ? View(label, nbytes)
                  : View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label),
                         nbytes)) {}

  ViewStorage(SpaceKind kind, unsigned char* data, std::size_t nbytes,
              py::object owner)
      : kind_(kind), view_(data, nbytes), owner_(std::move(owner)) {}

  ~ViewStorage() override {
    if (owner_ && Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      owner_ = py::object();
    } else {
      owner_.release(); // the interpreter is gone: nothing to decrement
    }
  }

  unsigned char* data() const override { return view_.data(); }
  std::size_t nbytes() const override { return view_.extent(0); }
  SpaceKind kind() const override { return kind_; }
  std::string label() const override { return view_.label(); }
  bool host_accessible() const override {
    return is_host_memory_space_v<MemorySpace>;
  }

  void copy_from_host(void* source) override {
    Kokkos::deep_copy(
        view_, HostView(static_cast<unsigned char*>(source), view_.extent(0)));
  }

  void copy_to_host(void* destination) const override {
    Kokkos::deep_copy(
        HostView(static_cast<unsigned char*>(destination), view_.extent(0)),
        view_);
  }

  Impl::CopyCompletion copy_to_host_async(void* destination) const override {
    using Pinned = Kokkos::View<unsigned char*, pinned_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    return Impl::queue_copy_to_host(
        Exec(), Pinned(static_cast<unsigned char*>(destination), nbytes()),
        view_);
  }

  std::shared_ptr<Storage> allocate(std::size_t nbytes,
                                    const std::string& label,
                                    bool zero) const override {
    try {
      return std::make_shared<ViewStorage>(kind_, label, nbytes, zero);
    } catch (const std::exception& error) {
      if (!is_allocation_failure(error))
        throw;
      throw_allocation_failure(label, nbytes, MemorySpace::name());
    }
  }

  void convert_into(Storage& destination, DType to, DType from,
                    const Reorder& reorder) const override {
    const std::size_t count = nbytes() / info(from).itemsize;
    const char* space = MemorySpace::name();
    begin_announced_copy(space, destination.label(), destination.data(), space,
                         label(), data(), destination.nbytes());
    try {
      if constexpr (std::is_same_v<Exec, Kokkos::DefaultExecutionSpace>) {
        convert_on_default_space(destination.data(), to, data(), from, count,
                                 reorder);
      } else {
        static_assert(std::is_same_v<Exec, Kokkos::DefaultHostExecutionSpace>,
                      "cunumpy: device arrays live in the default or the "
                      "default host execution space's memory");
        convert_on_host_space(destination.data(), to, data(), from, count,
                              reorder);
      }
    } catch (...) {
      end_announced_copy();
      throw;
    }
    end_announced_copy();
  }

  void release() noexcept override {
    view_ = View();
    released_ = true;
  }

private:
  SpaceKind kind_;
  View view_;
  py::object owner_;
};

[[noreturn]] void throw_released() {
  throw std::runtime_error(
      "cunumpy.DeviceArray: Kokkos was finalized at interpreter exit and the "
      "array's memory was released; device arrays cannot be used after it");
}

} // namespace

void begin_announced_copy(const char* dst_space, const std::string& dst_label,
                          const void* dst, const char* src_space,
                          const std::string& src_label, const void* src,
                          std::uint64_t nbytes) {
  if (Kokkos::Tools::Experimental::get_callbacks().begin_deep_copy != nullptr)
    Kokkos::Tools::beginDeepCopy(
        Kokkos::Tools::make_space_handle(dst_space), dst_label, dst,
        Kokkos::Tools::make_space_handle(src_space), src_label, src, nbytes);
}

void end_announced_copy() {
  if (Kokkos::Tools::Experimental::get_callbacks().end_deep_copy != nullptr)
    Kokkos::Tools::endDeepCopy();
}

const DTypeInfo& info(DType dtype) {
  return dtype_table[static_cast<std::size_t>(dtype)];
}

bool is_complex(DType dtype) {
  return dtype == DType::complex64 || dtype == DType::complex128;
}

DType parse_dtype(std::string_view name, std::string_view function) {
  for (int i = 0; i < dtype_count; ++i)
    if (name == dtype_table[i].name)
      return static_cast<DType>(i);
  std::string supported;
  for (const auto& entry : dtype_table)
    supported += (supported.empty() ? "" : ", ") + std::string(entry.name);
  throw py::type_error(std::string(function) + ": unsupported dtype " +
                       std::string(name) + " (supported: " + supported + ")");
}

SpaceKind current_space() {
  return active_space.load(std::memory_order_relaxed);
}

void set_current_space(SpaceKind kind) {
#if !CUNUMPY_HAS_FAKE_DEVICE
  if (kind == SpaceKind::fake_device)
    throw std::runtime_error(
        "cunumpy: this Kokkos version has no logical memory spaces (removed "
        "in Kokkos 4.3), so there is no fake device");
#endif
  active_space.store(kind, std::memory_order_relaxed);
}

bool is_host_space(SpaceKind kind) {
  return kind == SpaceKind::device &&
         is_host_memory_space_v<default_device_memory_space>;
}

const char* space_name(SpaceKind kind) {
#if CUNUMPY_HAS_FAKE_DEVICE
  if (kind == SpaceKind::fake_device)
    return testing::FakeDevice::name();
#endif
  (void)kind;
  return default_device_memory_space::name();
}

Storage::Storage() {
  std::lock_guard lock(registry_mutex);
  registry().insert(this);
}

Storage::~Storage() {
  std::lock_guard lock(registry_mutex);
  registry().erase(this);
}

std::shared_ptr<Storage> allocate_storage(SpaceKind kind, std::size_t nbytes,
                                          const std::string& label, bool zero,
                                          std::string_view what) {
  try {
#if CUNUMPY_HAS_FAKE_DEVICE
    if (kind == SpaceKind::fake_device)
      return std::make_shared<ViewStorage<testing::FakeDevice>>(kind, label,
                                                                nbytes, zero);
#endif
    return std::make_shared<ViewStorage<default_device_memory_space>>(
        kind, label, nbytes, zero);
  } catch (const std::exception& error) {
    if (!is_allocation_failure(error))
      throw;
    throw_allocation_failure(what.empty() ? std::string_view(label) : what,
                             nbytes, space_name(kind));
  }
}

void throw_allocation_failure(std::string_view what, std::size_t nbytes,
                              const char* space) {
  const std::string message = std::string(what) + ": cannot allocate " +
                              std::to_string(nbytes) + " bytes in " + space +
                              " (out of memory); use a smaller shape";
  PyErr_SetString(PyExc_MemoryError, message.c_str());
  throw py::error_already_set();
}

std::shared_ptr<Storage> alias_host_memory(void* data, std::size_t nbytes,
                                           py::object owner) {
  return std::make_shared<ViewStorage<Kokkos::HostSpace>>(
      SpaceKind::device, static_cast<unsigned char*>(data), nbytes,
      std::move(owner));
}

std::shared_ptr<Storage> alias_device_memory(SpaceKind kind, void* data,
                                             std::size_t nbytes,
                                             py::object owner) {
#if CUNUMPY_HAS_FAKE_DEVICE
  if (kind == SpaceKind::fake_device)
    return std::make_shared<ViewStorage<testing::FakeDevice>>(
        kind, static_cast<unsigned char*>(data), nbytes, std::move(owner));
#endif
  return std::make_shared<ViewStorage<default_device_memory_space>>(
      kind, static_cast<unsigned char*>(data), nbytes, std::move(owner));
}

void release_all_storage() noexcept {
  std::lock_guard lock(registry_mutex);
  for (Storage* storage : registry())
    storage->release();
}

std::size_t live_storage_count() noexcept {
  std::lock_guard lock(registry_mutex);
  std::size_t count = 0;
  for (Storage* storage : registry())
    count += storage->released() ? 0 : 1;
  return count;
}

DeviceArray::DeviceArray(std::shared_ptr<Storage> storage,
                         std::vector<std::int64_t> shape, DType dtype,
                         bool fortran)
    : storage_(std::move(storage)), shape_(std::move(shape)), dtype_(dtype),
      fortran_(fortran) {
  // An array that is also row-major contiguous (rank <= 1, a single extent
  // above 1) is stored as C-ordered.
  if (fortran_ && is_contiguous(shape_, strides(), itemsize(), false))
    fortran_ = false;
}

const std::shared_ptr<Storage>& DeviceArray::storage() const {
  if (storage_->released())
    throw_released();
  return storage_;
}

std::size_t DeviceArray::size() const noexcept {
  std::size_t count = 1;
  for (auto extent : shape_)
    count *= static_cast<std::size_t>(extent);
  return count;
}

std::vector<std::int64_t> DeviceArray::strides() const {
  std::vector<std::int64_t> result(shape_.size());
  auto stride = static_cast<std::int64_t>(itemsize());
  if (fortran_) {
    for (std::size_t d = 0; d < shape_.size(); ++d) {
      result[d] = stride;
      stride *= std::max<std::int64_t>(shape_[d], 1);
    }
  } else {
    for (std::size_t d = shape_.size(); d-- > 0;) {
      result[d] = stride;
      stride *= std::max<std::int64_t>(shape_[d], 1);
    }
  }
  return result;
}

bool DeviceArray::c_contiguous() const {
  return is_contiguous(shape_, strides(), itemsize(), false);
}

bool DeviceArray::f_contiguous() const {
  return is_contiguous(shape_, strides(), itemsize(), true);
}

Impl::ArrayShape DeviceArray::array_shape() const {
  return python::array_shape(shape_, dtype_);
}

Impl::ArrayShape array_shape(const std::vector<std::int64_t>& shape,
                             DType dtype) {
  Impl::ArrayShape result;
  result.rank = static_cast<int>(shape.size());
  for (int d = 0; d < result.rank; ++d)
    result.extents[d] = static_cast<std::size_t>(shape[d]);
  result.dtype = info(dtype).name;
  return result;
}

bool is_contiguous(const std::vector<std::int64_t>& shape,
                   const std::vector<std::int64_t>& strides,
                   std::size_t itemsize, bool fortran) {
  for (auto extent : shape)
    if (extent == 0)
      return true;
  auto expected = static_cast<std::int64_t>(itemsize);
  const std::size_t n = shape.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t d = fortran ? k : n - 1 - k;
    if (shape[d] == 1)
      continue;
    if (strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

namespace {

/// repr(value), cut to a short excerpt: a hostile shape may be huge.
std::string short_repr(const py::handle& value) {
  constexpr std::size_t limit = 80;
  std::string text;
  try {
    text = py::repr(value).cast<std::string>();
  } catch (const py::error_already_set&) {
    text = "<" + std::string(Py_TYPE(value.ptr())->tp_name) + ">";
  }
  if (text.size() > limit)
    text = text.substr(0, limit) + "...";
  return text;
}

} // namespace

std::vector<std::int64_t> parse_shape(const py::handle& shape,
                                      std::string_view function) {
  const auto invalid = [&](const std::string& why) {
    return py::value_error(std::string(function) + ": shape " +
                           short_repr(shape) + " " + why);
  };
  // An int (anything with __index__) is a 1-D shape; a str is no sequence
  // of extents.
  std::vector<py::object> extents;
  if (PyIndex_Check(shape.ptr()) != 0) {
    extents.push_back(py::reinterpret_borrow<py::object>(shape));
  } else if (PyUnicode_Check(shape.ptr()) != 0 ||
             PyBytes_Check(shape.ptr()) != 0 ||
             PyIter_Check(shape.ptr()) != 0 ||
             PySequence_Check(shape.ptr()) == 0) {
    throw invalid("is not an integer or a sequence of integers");
  } else {
    for (auto extent : py::iter(shape)) {
      if (extents.size() == static_cast<std::size_t>(max_rank))
        throw invalid("has rank " + std::to_string(max_rank + 1) +
                      " or more; at most " + std::to_string(max_rank) +
                      " dimensions are supported");
      extents.push_back(py::reinterpret_borrow<py::object>(extent));
    }
  }
  std::vector<std::int64_t> result;
  for (const auto& extent : extents) {
    if (PyIndex_Check(extent.ptr()) == 0)
      throw invalid("has an extent that is not an integer: " +
                    short_repr(extent));
    auto index =
        py::reinterpret_steal<py::object>(PyNumber_Index(extent.ptr()));
    if (!index)
      throw py::error_already_set();
    int overflow = 0;
    const long long value =
        PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (value == -1 && PyErr_Occurred() != nullptr)
      throw py::error_already_set();
    if (overflow > 0)
      throw invalid("has an extent beyond 2**63 - 1: " + short_repr(extent));
    if (overflow < 0 || value < 0)
      throw invalid("has a negative extent");
    result.push_back(static_cast<std::int64_t>(value));
  }
  return result;
}

std::string shape_repr(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t d = 0; d < shape.size(); ++d)
    text += (d == 0 ? "" : ", ") + std::to_string(shape[d]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

bool checked_multiply(std::int64_t a, std::int64_t b, std::int64_t& product) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  if (a != 0 && b > max / a)
    return false;
  product = a * b;
  return true;
}

std::size_t checked_nbytes(const std::vector<std::int64_t>& shape,
                           std::size_t itemsize, std::string_view function) {
  // The strides multiply the extents other than 0 (DeviceArray::strides),
  // so they must fit even when an empty extent makes the array empty.
  std::int64_t span = static_cast<std::int64_t>(itemsize);
  bool empty = false;
  for (auto extent : shape) {
    if (extent < 0 ||
        !checked_multiply(span, std::max<std::int64_t>(extent, 1), span))
      throw py::value_error(
          std::string(function) + ": shape " + shape_repr(shape) + " of " +
          std::to_string(itemsize) +
          "-byte items is too large: the array would span 2**63 bytes or "
          "more; use a smaller shape");
    empty = empty || extent == 0;
  }
  return empty ? 0 : static_cast<std::size_t>(span);
}

// DLPack: the ABI structs of <cunumpy/dlpack.hpp>.
namespace {

using cunumpy::dlpack::DLDataType;
using cunumpy::dlpack::DLDevice;
using cunumpy::dlpack::DLManagedTensor;
using cunumpy::dlpack::DLTensor;

struct DLPackContext {
  std::shared_ptr<Storage> storage;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor tensor{};
};

void delete_dlpack_context(DLManagedTensor* tensor) {
  delete static_cast<DLPackContext*>(tensor->manager_ctx);
}

void dlpack_capsule_destructor(PyObject* capsule) {
  // A consumer renames the capsule "used_dltensor" and owns the tensor.
  if (PyCapsule_IsValid(capsule, "dltensor") == 0)
    return;
  auto* tensor =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  tensor->deleter(tensor);
}

DLDevice dlpack_device(const DeviceArray& array) {
  const Storage& storage = *array.storage();
  if (storage.kind() == SpaceKind::fake_device)
    return {cunumpy::dlpack::fake_device, 0};
  if (storage.host_accessible())
    return {cunumpy::dlpack::cpu, 0};
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<default_device_memory_space, Kokkos::CudaSpace>)
    return {cunumpy::dlpack::cuda, Kokkos::Cuda().cuda_device()};
#endif
  (void)cunumpy::dlpack::cuda;
  return {cunumpy::dlpack::fake_device, 0};
}

py::object to_dlpack(const DeviceArray& array, const py::object& stream,
                     const py::object& max_version, const py::object& dl_device,
                     const py::object& copy) {
  (void)stream; // Kokkos copies are fenced: the data is ready.
  const DLDevice device = dlpack_device(array);
  // Only Kokkos code built with <cunumpy/dlpack.hpp> reads the fake device:
  // it asks without max_version (or for device 12). A library that asks
  // with max_version (NumPy, CuPy, PyTorch) cannot, and would fail on the
  // capsule with a message that does not say why.
  if (device.device_type == cunumpy::dlpack::fake_device &&
      dl_device.is_none() && !max_version.is_none())
    throw py::buffer_error(
        "cunumpy.DeviceArray.__dlpack__: the array is on cunumpy's fake "
        "device (DLPack device type 12), which only Kokkos code built with "
        "<cunumpy/dlpack.hpp> can read, not NumPy or another library; call "
        "cunumpy.to_numpy(a) for a counted copy to the host");
  if (!dl_device.is_none()) {
    auto requested = dl_device.cast<std::pair<int, int>>();
    if (requested.first != device.device_type ||
        requested.second != device.device_id)
      throw py::buffer_error(
          "cunumpy.DeviceArray.__dlpack__: the array cannot be exported to "
          "another device; use cunumpy.to_numpy() for a counted copy");
  }
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error(
        "cunumpy.DeviceArray.__dlpack__: copy=True is not supported; use "
        "cunumpy.to_numpy() or DeviceArray.copy() for a counted copy");
  auto context = std::make_unique<DLPackContext>();
  context->storage = array.storage();
  context->shape = array.shape();
  context->strides = array.strides();
  for (auto& stride : context->strides)
    stride /= static_cast<std::int64_t>(array.itemsize());
  DLTensor& tensor = context->tensor.dl_tensor;
  tensor.data = context->storage->data();
  tensor.device = device;
  tensor.ndim = array.ndim();
  tensor.dtype = {info(array.dtype()).dlpack,
                  static_cast<std::uint8_t>(8 * array.itemsize()), 1};
  tensor.shape = context->shape.data();
  tensor.strides = context->strides.data();
  tensor.byte_offset = 0;
  context->tensor.manager_ctx = context.get();
  context->tensor.deleter = &delete_dlpack_context;
  PyObject* capsule =
      PyCapsule_New(&context->tensor, "dltensor", &dlpack_capsule_destructor);
  if (capsule == nullptr)
    throw py::error_already_set();
  context.release();
  return py::reinterpret_steal<py::object>(capsule);
}

/// NumPy dtype objects, made once; never freed (they must outlive every
/// array, including at interpreter exit).
py::handle numpy_dtype(DType dtype) {
  static std::array<PyObject*, dtype_count> cache{};
  PyObject*& entry = cache[static_cast<std::size_t>(dtype)];
  if (entry == nullptr)
    entry = py::module_::import("numpy")
                .attr("dtype")(info(dtype).name)
                .release()
                .ptr();
  return entry;
}

struct Flags {
  bool c_contiguous;
  bool f_contiguous;
};

/// Exports the bytes of a host-accessible storage through the buffer
/// protocol (DeviceArray itself has none, so NumPy cannot read it
/// implicitly).
struct HostBuffer {
  std::shared_ptr<Storage> storage;
};

std::string shape_text(const DeviceArray& array) {
  return Impl::shape_string(array.array_shape());
}

[[noreturn]] void refuse_implicit(const std::string& what) {
  throw py::type_error(
      what +
      ": a cunumpy.DeviceArray is device memory, never read implicitly; "
      "copy it to the host with cunumpy.to_numpy(a) (counted), or start the "
      "copy without waiting with cunumpy.to_host_async(a) and use "
      "result()");
}

/// The operations through which Python would read the device data
/// implicitly (NumPy's __array__, __index__), and copy/pickle, all refused
/// with what to call instead.
void bind_no_implicit_conversions(py::class_<DeviceArray>& device_array) {
  {
    // pybind11 would write the signature as returning None.
    py::options options;
    options.disable_function_signatures();
    device_array.def(
        "__array__",
        [](const DeviceArray&, const py::args&, const py::kwargs&) {
          throw py::type_error(
              "cunumpy.DeviceArray cannot be converted to a NumPy array "
              "implicitly: call cunumpy.to_numpy(a) to copy it to the host "
              "(the copy is counted)");
        },
        "__array__(dtype=None, copy=None)\n\nAlways raises TypeError: a "
        "DeviceArray is never converted implicitly; cunumpy.to_numpy(a) "
        "makes one counted copy.");
  }
  // The number conversions, the comparisons and the other operators are
  // array operations, forwarded to the array library of the memory
  // (cunumpy/_operations.py); CuPy's arrays have no __index__.
  device_array.def("__index__", [](const DeviceArray&) -> py::object {
    refuse_implicit("index(cunumpy.DeviceArray)");
  });
  // Arrays stay usable as keys, by identity, although == is elementwise.
  device_array.def("__hash__", [](const py::object& self) {
    return py::hash(py::make_tuple(reinterpret_cast<std::uintptr_t>(self.ptr()),
                                   "DeviceArray"));
  });
  device_array.def("__copy__", [](const DeviceArray&) -> py::object {
    throw py::type_error(
        "copy.copy(cunumpy.DeviceArray): use a.copy() for a copy on the "
        "device (one device_copy), or cunumpy.to_numpy(a) for a counted "
        "copy on the host");
  });
  device_array.def("__deepcopy__",
                   [](const DeviceArray&, const py::object&) -> py::object {
                     throw py::type_error(
                         "copy.deepcopy(cunumpy.DeviceArray): use a.copy() "
                         "for a copy on the device (one device_copy), or "
                         "cunumpy.to_numpy(a) for a counted copy on the host");
                   });
  device_array.def("__reduce_ex__",
                   [](const DeviceArray&, const py::object&) -> py::object {
                     throw py::type_error(
                         "cannot pickle a cunumpy.DeviceArray: its data is in "
                         "device memory; pickle cunumpy.to_numpy(a) (one "
                         "counted copy) and cunumpy.to_device() it after "
                         "loading");
                   });
}

} // namespace

void bind_device_array(py::module_& module) {
  // The element types and ranks every front end supports, from one table.
  py::list names;
  for (const DTypeInfo& info : dtype_table)
    names.append(info.name);
  module.attr("dtype_names") = py::tuple(names);
  module.attr("max_ndim") = max_rank;
  py::class_<Flags>(module, "Flags",
                    "Contiguity of a DeviceArray, like numpy.ndarray.flags.")
      .def_readonly("c_contiguous", &Flags::c_contiguous)
      .def_readonly("f_contiguous", &Flags::f_contiguous)
      .def_property_readonly("contiguous",
                             [](const Flags& f) { return f.c_contiguous; })
      .def_property_readonly("fortran",
                             [](const Flags& f) { return f.f_contiguous; })
      .def_property_readonly("writeable", [](const Flags&) { return true; })
      .def_property_readonly("owndata", [](const Flags&) { return true; })
      .def("__getitem__",
           [](const Flags& f, const std::string& key) {
             if (key == "C_CONTIGUOUS" || key == "C" || key == "CONTIGUOUS")
               return f.c_contiguous;
             if (key == "F_CONTIGUOUS" || key == "F" || key == "FORTRAN")
               return f.f_contiguous;
             if (key == "WRITEABLE" || key == "W" || key == "OWNDATA" ||
                 key == "O")
               return true;
             throw py::key_error(key);
           })
      .def("__repr__", [](const Flags& f) {
        return std::string("  C_CONTIGUOUS : ") +
               (f.c_contiguous ? "True" : "False") +
               "\n  F_CONTIGUOUS : " + (f.f_contiguous ? "True" : "False");
      });

  py::class_<HostBuffer>(module, "_HostBuffer", py::buffer_protocol())
      .def_buffer([](HostBuffer& buffer) {
        return py::buffer_info(
            buffer.storage->data(), 1, "B", 1,
            {static_cast<py::ssize_t>(buffer.storage->nbytes())},
            {py::ssize_t(1)});
      });

  py::class_<DeviceArray> device_array(
      module, "DeviceArray",
      "An array in Kokkos device memory (the \"kokkos\" backend).\n\n"
      "Its storage is a Kokkos view in the device space (or the fake "
      "device). It is never converted implicitly: numpy.asarray() raises "
      "TypeError; cunumpy.to_numpy() makes one counted copy, "
      "cunumpy.to_host_async() one the host does not wait for. Array "
      "operations run where the memory is (NumPy or CuPy), without a "
      "copy.");
  bind_no_implicit_conversions(device_array);
  device_array
      .def(py::init([](const py::object& shape, const py::object& dtype,
                       const py::object& order) {
             if (!py::isinstance<py::str>(order) ||
                 (order.cast<std::string>() != "C" &&
                  order.cast<std::string>() != "F"))
               throw py::value_error(
                   "cunumpy.DeviceArray: order must be 'C' or 'F', not " +
                   short_repr(order));
             auto extents = parse_shape(shape, "cunumpy.DeviceArray");
             const DType type = parse_dtype(
                 py::str(py::module_::import("numpy").attr("dtype")(dtype))
                     .cast<std::string>(),
                 "cunumpy.DeviceArray");
             const std::size_t nbytes = checked_nbytes(
                 extents, info(type).itemsize, "cunumpy.DeviceArray");
             auto storage = allocate_storage(
                 current_space(), nbytes, "cunumpy::DeviceArray", true,
                 "cunumpy.DeviceArray: shape " + shape_repr(extents) + " of " +
                     info(type).name);
             return DeviceArray(std::move(storage), std::move(extents), type,
                                order.cast<std::string>() == "F");
           }),
           py::arg("shape"), py::arg("dtype") = "float64",
           py::arg("order") = "C",
           "A zero-filled array in the current device space (no copy).")
      .def_property_readonly("shape",
                             [](const DeviceArray& a) {
                               py::tuple shape(a.ndim());
                               for (int d = 0; d < a.ndim(); ++d)
                                 shape[d] = py::int_(a.shape()[d]);
                               return shape;
                             })
      .def_property_readonly("dtype",
                             [](const DeviceArray& a) {
                               return py::reinterpret_borrow<py::object>(
                                   numpy_dtype(a.dtype()));
                             })
      .def_property_readonly("ndim", &DeviceArray::ndim)
      .def_property_readonly("size", &DeviceArray::size)
      .def_property_readonly("nbytes", &DeviceArray::nbytes)
      .def_property_readonly("itemsize", &DeviceArray::itemsize)
      .def_property_readonly(
          "strides",
          [](const DeviceArray& a) { return py::tuple(py::cast(a.strides())); })
      .def_property_readonly("flags",
                             [](const DeviceArray& a) {
                               return Flags{a.c_contiguous(), a.f_contiguous()};
                             })
      .def_property_readonly(
          "space",
          [](const DeviceArray& a) {
            return std::string(space_name(a.storage()->kind()));
          },
          "The Kokkos memory space: \"FakeDevice\", \"Cuda\", \"Host\"...")
      .def_property_readonly(
          "label", [](const DeviceArray& a) { return a.storage()->label(); },
          "The Kokkos label of the view.")
      .def("__dlpack__", &to_dlpack, py::kw_only(),
           py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
           py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "A DLPack capsule of the array (no copy).")
      .def(
          "__dlpack_device__",
          [](const DeviceArray& a) {
            const DLDevice device = dlpack_device(a);
            return py::make_tuple(device.device_type, device.device_id);
          },
          "(device type, device id): CPU (1) on a host-only build, CUDA (2), "
          "or the extension device (12) for the fake device.")
#ifdef KOKKOS_ENABLE_CUDA
      .def_property_readonly(
          "__cuda_array_interface__",
          [](const DeviceArray& a) {
            if (a.storage()->kind() == SpaceKind::fake_device ||
                a.storage()->host_accessible())
              throw py::attribute_error(
                  "__cuda_array_interface__: not a CUDA array");
            py::dict interface;
            interface["shape"] = py::tuple(py::cast(a.shape()));
            interface["typestr"] = info(a.dtype()).typestr;
            interface["data"] = py::make_tuple(
                reinterpret_cast<std::uintptr_t>(a.storage()->data()), false);
            interface["strides"] =
                a.fortran() ? py::object(py::tuple(py::cast(a.strides())))
                            : py::object(py::none());
            interface["version"] = 3;
            return interface;
          })
#endif
      .def("_host_buffer",
           [](const DeviceArray& a) {
             if (!a.storage()->host_addressable())
               throw py::value_error("cunumpy.DeviceArray: not in host memory");
             return HostBuffer{a.storage()};
           })
      .def_property_readonly("_fortran", &DeviceArray::fortran)
      .def_property_readonly(
          "_host_accessible",
          [](const DeviceArray& a) { return a.storage()->host_accessible(); })
      .def("__repr__", [](const DeviceArray& a) {
        return "DeviceArray(shape=" + shape_text(a) +
               ", dtype=" + info(a.dtype()).name +
               ", space=" + space_name(a.storage()->kind()) + ")";
      });

  module.def("live_device_arrays", &live_storage_count,
             "Number of device allocations held by DeviceArrays.");
}

} // namespace cunumpy::python
