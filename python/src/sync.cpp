// Host waits (synchronize(), the wait of an async result) and copies made by
// other libraries, announced to Kokkos Tools so that they are counted like
// Kokkos' own.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>

#include "call_site.hpp"
#include "device_array.hpp"
#include "module.hpp"

namespace cunumpy::python {
namespace {

/// Waits for the device (Kokkos::fence) and records it as one sync at the
/// Python caller, described as `api()`.
void wait_for_device(const std::string& api, bool implicit) {
  const PythonSite site = python_caller();
  Impl::SyncScope scope(
      api, SourceLocation{site.file.c_str(), site.line, site.function.c_str()},
      implicit);
  py::gil_scoped_release unlocked;
  Kokkos::fence();
}

/// Tells Kokkos Tools that the host waited at the end of a copy, as Kokkos 4
/// does inside a blocking deep copy (its "post deep copy fence"): tools,
/// the recorder included, take a copy without one for an asynchronous copy.
/// Kokkos 3 reports no such fence, and its tools take copies as blocking.
void announce_blocking_copy_end() {
#if KOKKOS_VERSION >= 40000
  if (Kokkos::Tools::Experimental::get_callbacks().begin_fence == nullptr)
    return;
  std::uint64_t handle = 0;
  Kokkos::Tools::beginFence(
      "cunumpy: copy made by another library, post copy fence", 0, &handle);
  Kokkos::Tools::endFence(handle);
#endif
}

/// Context manager around a copy another library makes (CuPy): Kokkos Tools
/// sees a deep copy between the named spaces, attributed to the caller, and
/// blocking unless `async`.
struct AnnouncedCopy {
  AnnouncedCopy(std::string what, std::string dst_space, std::string src_space,
                std::uint64_t nbytes, std::string label, bool async)
      : what(std::move(what)), dst_space(std::move(dst_space)),
        src_space(std::move(src_space)), nbytes(nbytes),
        label(std::move(label)), async(async) {}

  std::string what;
  std::string dst_space;
  std::string src_space;
  std::uint64_t nbytes = 0;
  std::string label;
  bool async = false;
  std::optional<PythonApiScope> scope;

  void enter() {
    if (scope)
      throw py::value_error("announced copy already active");
    scope.emplace(what, async);
    begin_announced_copy(dst_space.c_str(), label, nullptr, src_space.c_str(),
                         label, nullptr, nbytes);
  }
  void exit() {
    if (!scope)
      return;
    if (!async)
      announce_blocking_copy_end();
    end_announced_copy();
    scope.reset();
  }
};

/// Context manager around a wait that Python code makes itself (on a CuPy
/// event): recorded as one sync at the Python caller, described as `api()`.
struct RecordedWait {
  explicit RecordedWait(std::string api, bool implicit)
      : api(std::move(api)), implicit(implicit) {}

  std::string api;
  bool implicit = false;
  PythonSite site;
  std::optional<Impl::SyncScope> scope;

  void enter() {
    if (scope)
      throw py::value_error("RecordedWait: already active");
    site = python_caller();
    scope.emplace(
        api,
        SourceLocation{site.file.c_str(), site.line, site.function.c_str()},
        implicit);
  }
  void exit() { scope.reset(); }
};

} // namespace

void bind_sync(py::module_& module) {
  module.def(
      "_set_debug_sync",
      [](bool on) {
        Impl::ensure_hooks();
        Impl::set_debug_sync(on);
      },
      py::arg("on"), "Debug-sync mode on or off (nested).");
  module.def(
      "synchronize", [] { wait_for_device("synchronize", false); },
      "Waits for the device; recorded as a sync.");
  module.def("wait", &wait_for_device, py::arg("api"),
             py::arg("implicit") = false,
             "Waits for the device on behalf of `api`; recorded as a sync.");

  py::class_<AnnouncedCopy>(module, "AnnouncedCopy",
                            "Context manager: the block is one copy of "
                            "`nbytes` from `src_space` to `dst_space`.")
      .def(py::init<std::string, std::string, std::string, std::uint64_t,
                    std::string, bool>(),
           py::arg("what"), py::arg("dst_space"), py::arg("src_space"),
           py::arg("nbytes"), py::arg("label") = "", py::arg("async_") = false)
      .def("__enter__", &AnnouncedCopy::enter)
      .def("__exit__", [](AnnouncedCopy& copy, const py::args&) {
        copy.exit();
        return false;
      });

  py::class_<RecordedWait>(module, "RecordedWait",
                           "Context manager: the block is one host wait, "
                           "recorded as a sync described as `api()`.")
      .def(py::init<std::string, bool>(), py::arg("api"),
           py::arg("implicit") = false)
      .def("__enter__", &RecordedWait::enter)
      .def("__exit__", [](RecordedWait& wait, const py::args&) {
        wait.exit();
        return false;
      });
}

} // namespace cunumpy::python
