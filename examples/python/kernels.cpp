// The "Kokkos code" of the Python examples: kernels a Python driver calls on
// cunumpy.DeviceArray (or NumPy) arrays. Arrays arrive through DLPack, without
// a copy, as unmanaged Kokkos views of the memory space they live in.

#include <cstdint>
#include <pybind11/pybind11.h>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/dlpack.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace py = pybind11;

namespace {

using cunumpy::dlpack::DLManagedTensor;
using cunumpy::dlpack::DLTensor;

/// A contiguous array borrowed through DLPack for the duration of a call.
class Borrowed {
public:
  Borrowed(const py::object& array, std::uint8_t code, std::uint8_t bits,
           const char* name) {
    py::capsule capsule = array.attr("__dlpack__")();
    tensor_ = static_cast<DLManagedTensor*>(
        PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (tensor_ == nullptr)
      throw py::error_already_set();
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");
    const DLTensor& t = tensor_->dl_tensor;
    if (t.dtype.code != code || t.dtype.bits != bits) {
      tensor_->deleter(tensor_);
      throw py::type_error(std::string("example_kernels: '") + name +
                           "' has the wrong dtype");
    }
    size_ = 1;
    for (int d = 0; d < t.ndim; ++d)
      size_ *= static_cast<std::size_t>(t.shape[d]);
  }
  ~Borrowed() { tensor_->deleter(tensor_); }
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;

  template <class T> T* data() const {
    const DLTensor& t = tensor_->dl_tensor;
    return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
  }
  std::size_t size() const { return size_; }
  std::int32_t device() const { return tensor_->dl_tensor.device.device_type; }

private:
  DLManagedTensor* tensor_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace

// Kernels are structs with a run<MemorySpace>() template: CUDA's extended
// lambdas (KOKKOS_LAMBDA) may not live in generic lambdas or unnamed
// namespaces.
namespace example {

template <class T, class Space>
using Unmanaged =
    Kokkos::View<T*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Runs `kernel.run<Space>()` with the Kokkos memory space of `array`.
template <class Kernel>
void on_space_of(const Borrowed& array, const Kernel& kernel) {
#if CUNUMPY_HAS_FAKE_DEVICE
  if (array.device() == cunumpy::dlpack::fake_device) {
    kernel.template run<cunumpy::testing::FakeDevice>();
    return;
  }
#endif
  if (array.device() == cunumpy::dlpack::cpu)
    kernel.template run<Kokkos::HostSpace>();
  else
    kernel.template run<Kokkos::DefaultExecutionSpace::memory_space>();
  Kokkos::fence();
}

/// power[i] = signal[i]^2.
struct Power {
  double* signal;
  double* power;
  std::size_t n;

  template <class Space> void run() const {
    using Exec = typename Space::execution_space;
    Unmanaged<double, Space> in(signal, n);
    Unmanaged<double, Space> out(power, n);
    Kokkos::parallel_for(
        "example::power", Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(std::size_t i) { out(i) = in(i)*in(i); });
  }
};

/// peak[()] = the index of the largest element of `values`.
struct ArgMax {
  double* values;
  std::int64_t* peak;
  std::size_t n;

  template <class Space> void run() const {
    using Exec = typename Space::execution_space;
    using Reducer = Kokkos::MaxLoc<double, std::int64_t, Space>;
    Unmanaged<double, Space> in(values, n);
    Unmanaged<std::int64_t, Space> out(peak, 1);
    Kokkos::View<typename Reducer::value_type, Space> best("example::best");
    Kokkos::parallel_reduce(
        "example::argmax",
        Kokkos::RangePolicy<Exec>(0, static_cast<std::int64_t>(n)),
        KOKKOS_LAMBDA(std::int64_t i, typename Reducer::value_type & local) {
          if (in(i) > local.val) {
            local.val = in(i);
            local.loc = i;
          }
        },
        Reducer(best));
    Kokkos::parallel_for(
        "example::store", Kokkos::RangePolicy<Exec>(0, 1),
        KOKKOS_LAMBDA(int) { out(0) = best().loc; });
  }
};

/// One explicit diffusion step of `state` (periodic), in place.
struct Advance {
  double* state;
  std::size_t n;
  double dt;

  template <class Space> void run() const {
    using Exec = typename Space::execution_space;
    const std::size_t size = n;
    const double step = dt;
    Unmanaged<double, Space> u(state, size);
    Kokkos::View<double*, Space> next("example::next", size);
    Kokkos::parallel_for(
        "example::advance", Kokkos::RangePolicy<Exec>(0, size),
        KOKKOS_LAMBDA(std::size_t i) {
          const double left = u((i + size - 1) % size);
          const double right = u((i + 1) % size);
          next(i) = u(i) + step * (left - 2.0 * u(i) + right);
        });
    // Same space on both sides: a kernel, not a transfer.
    Kokkos::parallel_for(
        "example::swap", Kokkos::RangePolicy<Exec>(0, size),
        KOKKOS_LAMBDA(std::size_t i) { u(i) = next(i); });
  }
};

/// norm[()] = the largest |state[i]|.
struct MaxNorm {
  double* state;
  double* norm;
  std::size_t n;

  template <class Space> void run() const {
    using Exec = typename Space::execution_space;
    Unmanaged<double, Space> u(state, n);
    Unmanaged<double, Space> out(norm, 1);
    Kokkos::View<double, Space> result("example::norm");
    Kokkos::parallel_reduce(
        "example::max_norm", Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(std::size_t i, double& local) {
          const double magnitude = u(i) < 0.0 ? -u(i) : u(i);
          if (magnitude > local)
            local = magnitude;
        },
        Kokkos::Max<double, Space>(result));
    Kokkos::parallel_for(
        "example::store", Kokkos::RangePolicy<Exec>(0, 1),
        KOKKOS_LAMBDA(int) { out(0) = result(); });
  }
};

void power(const py::object& signal_array, const py::object& power_array) {
  Borrowed signal(signal_array, 2, 64, "signal");
  Borrowed power(power_array, 2, 64, "power");
  if (signal.size() != power.size())
    throw py::value_error("example_kernels.power: sizes differ");
  on_space_of(signal, Power{signal.data<double>(), power.data<double>(),
                            signal.size()});
}

void argmax(const py::object& values_array, const py::object& peak_array) {
  Borrowed values(values_array, 2, 64, "values");
  Borrowed peak(peak_array, 0, 64, "peak");
  on_space_of(values, ArgMax{values.data<double>(), peak.data<std::int64_t>(),
                             values.size()});
}

void advance(const py::object& state_array, double dt) {
  Borrowed state(state_array, 2, 64, "state");
  on_space_of(state, Advance{state.data<double>(), state.size(), dt});
}

void max_norm(const py::object& state_array, const py::object& norm_array) {
  Borrowed state(state_array, 2, 64, "state");
  Borrowed norm(norm_array, 2, 64, "norm");
  on_space_of(state,
              MaxNorm{state.data<double>(), norm.data<double>(), state.size()});
}

} // namespace example

PYBIND11_MODULE(example_kernels, module) {
  module.doc() = "Kokkos kernels for cunumpy's Python examples.";
  using namespace example;
  module.def("power", &power, py::arg("signal"), py::arg("power"));
  module.def("argmax", &argmax, py::arg("values"), py::arg("peak"));
  module.def("advance", &advance, py::arg("state"), py::arg("dt"));
  module.def("max_norm", &max_norm, py::arg("state"), py::arg("norm"));
}
