// Test-only extension: C++ code called from Python that copies with raw
// Kokkos::deep_copy, as an existing Kokkos code would. This file is compiled
// without debug information, so no C++ frame has a line and the recorder
// falls back to the Python line that called into C++.

#include <cstddef>
#include <cstdint>
#include <pybind11/pybind11.h>

#include <Kokkos_Core.hpp>

#include <cunumpy/dlpack.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace py = pybind11;

int copy_with_lines(std::size_t n);
extern const char* const source_with_lines;

namespace {

#if CUNUMPY_HAS_FAKE_DEVICE
using Device = cunumpy::testing::FakeDevice;
#else
using Device = Kokkos::DefaultExecutionSpace::memory_space;
#endif

using cunumpy::dlpack::DLManagedTensor;
using cunumpy::dlpack::DLTensor;

} // namespace

// Kernels with KOKKOS_LAMBDA live in a named namespace (CUDA's extended
// lambdas may not be in an unnamed one).
namespace test_copies {

template <class Space>
void scale_in(double* data, std::size_t count, double factor) {
  Kokkos::View<double*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> view(
      data, count);
  Kokkos::parallel_for(
      "scale", Kokkos::RangePolicy<typename Space::execution_space>(0, count),
      KOKKOS_LAMBDA(std::size_t i) { view(i) *= factor; });
  Kokkos::fence();
}

/// A user's kernel: multiplies the float64 elements of `array` (any object
/// with __dlpack__, e.g. a cunumpy.DeviceArray) by `factor`, in place, on
/// the device it lives on. No copy.
void scale(const py::object& array, double factor) {
  py::capsule capsule = array.attr("__dlpack__")();
  auto* tensor = static_cast<DLManagedTensor*>(
      PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (tensor == nullptr)
    throw py::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  const DLTensor& t = tensor->dl_tensor;
  std::size_t count = 1;
  for (int d = 0; d < t.ndim; ++d)
    count *= static_cast<std::size_t>(t.shape[d]);
  const bool float64 = t.dtype.code == 2 && t.dtype.bits == 64;
  if (float64) {
    double* data = static_cast<double*>(t.data);
    if (t.device.device_type == 12)
      scale_in<Device>(data, count, factor);
    else
      scale_in<Kokkos::HostSpace>(data, count, factor);
  }
  tensor->deleter(tensor);
  if (!float64)
    throw py::type_error("scale: float64 arrays only");
}

/// Reads a device scalar into a host double: a to_host copy and an
/// implicit sync (the host waits for the value).
double read_scalar(double value) {
  Kokkos::View<double, Device> device("norm");
  Kokkos::parallel_for(
      "set", Kokkos::RangePolicy<Device::execution_space>(0, 1),
      KOKKOS_LAMBDA(int) { device() = value; });
  double host = 0.0;
  Kokkos::deep_copy(host, device);
  return host;
}

} // namespace test_copies

namespace {

/// One host-to-device and one device-to-host copy of `n` doubles.
void round_trip(std::size_t n) {
  Kokkos::View<double*, Kokkos::HostSpace> host("raw_host", n);
  Kokkos::View<double*, Device> device("raw_device", n);
  Kokkos::deep_copy(device, host);
  Kokkos::deep_copy(host, device);
}

} // namespace

namespace test_copies {

/// A counter of copies as Tpetra's Details::DeepCopyCounter: it sets its
/// own begin_deep_copy callback in Kokkos' table.
int counted_copies = 0;
void count_copy(Kokkos_Profiling_SpaceHandle, const char*, const void*,
                Kokkos_Profiling_SpaceHandle, const char*, const void*,
                uint64_t) {
  ++counted_copies;
}

/// A tool that takes both copy callbacks, forwards every begin to what it
/// found and swallows every end.
Kokkos_Profiling_EventSet half_forwarder_saved{};
void half_forwarder_begin(Kokkos_Profiling_SpaceHandle dst,
                          const char* dst_label, const void* dst_ptr,
                          Kokkos_Profiling_SpaceHandle src,
                          const char* src_label, const void* src_ptr,
                          uint64_t size) {
  if (half_forwarder_saved.begin_deep_copy != nullptr)
    half_forwarder_saved.begin_deep_copy(dst, dst_label, dst_ptr, src,
                                         src_label, src_ptr, size);
}
void half_forwarder_end() {}
void start_half_forwarder() {
  Kokkos_Profiling_EventSet table =
      Kokkos::Tools::Experimental::get_callbacks();
  half_forwarder_saved = table;
  table.begin_deep_copy = &half_forwarder_begin;
  table.end_deep_copy = &half_forwarder_end;
  Kokkos::Tools::Experimental::set_callbacks(table);
}

/// `n` copies of 8 bytes from the host to a "Cuda" space, reported through
/// Kokkos' own tools entry points (any Kokkos, no device needed).
void tool_copies(int n) {
  static double data[1];
  for (int i = 0; i < n; ++i) {
    Kokkos::Tools::beginDeepCopy(
        Kokkos::Tools::make_space_handle("Cuda"), "device", data,
        Kokkos::Tools::make_space_handle("Host"), "host", data, 8);
    Kokkos::Tools::endDeepCopy();
  }
}

} // namespace test_copies

PYBIND11_MODULE(cunumpy_test_copies, module) {
  module.def(
      "start_copy_counter",
      [] {
        Kokkos::Tools::Experimental::set_begin_deep_copy_callback(
            &test_copies::count_copy);
      },
      "Replaces Kokkos' begin_deep_copy callback, as Tpetra's "
      "DeepCopyCounter::start() does.");
  module.def("counted_copies", [] { return test_copies::counted_copies; });
  module.def("start_half_forwarder", &test_copies::start_half_forwarder,
             "A tool takes both copy callbacks, forwards the begins and "
             "swallows the ends.");
  module.def("tool_copies", &test_copies::tool_copies, py::arg("n"),
             "n copies host to 'Cuda', through Kokkos' tools entry points.");
  module.doc() = "Raw Kokkos copies made by C++ code, for cunumpy's tests.";
  module.attr("has_fake_device") = bool(CUNUMPY_HAS_FAKE_DEVICE);
  module.attr("source_with_lines") = source_with_lines;
  module.def("round_trip", &round_trip, py::arg("n"),
             "A raw host->device and device->host copy of n doubles.");
  module.def(
      "round_trip_without_gil",
      [](std::size_t n) {
        py::gil_scoped_release unlocked;
        round_trip(n);
      },
      py::arg("n"), "round_trip with the GIL released.");
  module.def("scale", &test_copies::scale, py::arg("array"), py::arg("factor"),
             "A kernel: multiplies a float64 array in place, through DLPack.");
  module.def("read_scalar", &test_copies::read_scalar, py::arg("value"),
             "Writes `value` into a device scalar and reads it back raw.");
  module.def("copy_with_lines", &copy_with_lines, py::arg("n"),
             "A raw host->device copy in a file with debug information; "
             "returns the line of the copy.");
}
