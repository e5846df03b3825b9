// Kokkos for Python: initialized when cunumpy._core is imported (unless the
// program did it), finalized at interpreter exit after the device arrays
// still alive have released their views.

#include <chrono>
#include <pybind11/stl.h>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <cunumpy/conversions.hpp>
#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/spaces.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "call_site.hpp"
#include "device_array.hpp"
#include "module.hpp"

namespace cunumpy::python {
namespace {

bool owns_kokkos = false;
bool finalized = false;

/// Why this build's device backend cannot run here, or "": without a GPU
/// Kokkos' initialization would abort the interpreter.
std::string device_unusable() {
#if defined(KOKKOS_ENABLE_CUDA)
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess)
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error);
  if (devices == 0)
    return "cudaGetDeviceCount: 0 devices";
#endif
  return "";
}

void initialize_kokkos() {
  if (!Kokkos::is_initialized()) {
    if (const std::string why = device_unusable(); !why.empty())
      throw py::import_error("cunumpy: this build's Kokkos has the CUDA "
                             "backend, and no CUDA device is usable here (" +
                             why + ")");
    static char program[] = "python";
    static char* argv[] = {program, nullptr};
    int argc = 1;
    Kokkos::initialize(argc, argv);
    owns_kokkos = true;
  }
  Impl::ensure_hooks();
}

/// Registered with atexit: frees what Python still holds, then finalizes
/// Kokkos if cunumpy initialized it.
void finalize() {
  if (finalized)
    return;
  finalized = true;
  py::module_::import("gc").attr("collect")();
  remove_site_provider();
  release_all_storage();
  if (owns_kokkos && Kokkos::is_initialized())
    Kokkos::finalize();
}

SpaceKind parse_space(const std::string& name) {
  if (name == "device")
    return SpaceKind::device;
  if (name == "fake")
    return SpaceKind::fake_device;
  throw py::value_error("cunumpy: unknown device space '" + name +
                        "' (expected 'device' or 'fake')");
}

/// Seconds per round trip (to_device then to_host) of `nbytes` with the C++
/// conversions on the fake device: the reference of the Python benchmark.
std::vector<double> cpp_round_trip_seconds(std::size_t nbytes, int repeats) {
  std::vector<double> seconds;
#if CUNUMPY_HAS_FAKE_DEVICE
  testing::register_fake_device();
  Kokkos::View<double*, Kokkos::HostSpace> host("host", nbytes / 8);
  Kokkos::deep_copy(host, 1.0);
  py::gil_scoped_release unlocked;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto device = cunumpy::to_device<testing::FakeDevice>(host);
    auto back = cunumpy::to_host(device);
    const auto stop = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
#else
  (void)nbytes;
  (void)repeats;
#endif
  return seconds;
}

} // namespace

void bind_lifecycle(py::module_& module) {
  initialize_kokkos();
  install_site_provider();
  py::module_::import("atexit").attr("register")(
      py::cpp_function(&finalize, py::name("_finalize_kokkos")));

  module.attr("has_fake_device") = bool(CUNUMPY_HAS_FAKE_DEVICE);
  module.attr("has_device_backend") = has_device_backend;
  module.attr("kokkos_version") = std::to_string(KOKKOS_VERSION / 10000) + "." +
                                  std::to_string(KOKKOS_VERSION / 100 % 100) +
                                  "." + std::to_string(KOKKOS_VERSION % 100);
  module.attr("owns_kokkos") = owns_kokkos;

  module.def("finalize", &finalize,
             "Releases the device arrays and finalizes Kokkos (at exit).");
  module.def(
      "python_caller",
      [] {
        PythonSite site = python_caller();
        return py::make_tuple(site.file, site.line, site.function);
      },
      "(file, line, function) of the innermost frame outside cunumpy.");
  module.def(
      "set_device_space",
      [](const std::string& name) {
        const SpaceKind kind = parse_space(name);
#if CUNUMPY_HAS_FAKE_DEVICE
        if (kind == SpaceKind::fake_device)
          testing::register_fake_device();
#endif
        set_current_space(kind);
      },
      py::arg("name"),
      "Where new device arrays go: 'device' (this Kokkos build's device "
      "space) or 'fake' (the fake device).");
  module.def(
      "device_space",
      [] {
        return current_space() == SpaceKind::fake_device ? "fake" : "device";
      },
      "'device' or 'fake'.");
  module.def(
      "device_space_name", [] { return space_name(current_space()); },
      "The Kokkos name of the current device memory space.");
  module.def(
      "device_is_host", [] { return is_host_space(current_space()); },
      "True when the current device space is host memory (a host-only "
      "build without the fake device): conversions are no-ops.");
  module.def(
      "device_stream",
      []() -> py::object {
#ifdef KOKKOS_ENABLE_CUDA
        return py::int_(
            reinterpret_cast<std::uintptr_t>(Kokkos::Cuda().cuda_stream()));
#else
        return py::none();
#endif
      },
      "The CUDA stream of Kokkos' default Cuda instance (an int), on which "
      "forwarded CuPy operations run; None without CUDA.");
  module.def("cpp_round_trip_seconds", &cpp_round_trip_seconds,
             py::arg("nbytes"), py::arg("repeats"),
             "Benchmark reference: C++ to_device + to_host on the fake "
             "device, seconds per round trip.");
}

} // namespace cunumpy::python
