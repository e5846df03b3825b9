#include "module.hpp"

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/version.hpp>

namespace {
/// An address inside this module: its frames are cunumpy's, never a call
/// site (a user's module may also be called _core).
const char module_marker = 0;
} // namespace

PYBIND11_MODULE(_core, module) {
  cunumpy::Impl::note_own_module(&module_marker);
  module.doc() = "The compiled core of cunumpy: Kokkos device arrays, copies "
                 "and the shared transfer recorder.";
  module.attr("__version__") = CUNUMPY_VERSION_STRING;
  using namespace cunumpy::python;
  // pybind11 takes the module name of the types and functions it creates
  // (their __module__, the type name in error messages and signatures) from
  // the scope's __module__ when it has one: name them after the public
  // modules that re-export them, cunumpy.DeviceArray rather than
  // cunumpy._core.DeviceArray.
  module.attr("__module__") = "cunumpy";
  bind_lifecycle(module);
  bind_device_array(module);
  bind_conversions(module);
  module.attr("__module__") = "cunumpy.profiling";
  bind_advice(module);
  bind_profiling(module);
  bind_budget(module);
  module.attr("__module__") = "cunumpy";
  bind_sync(module);
  py::delattr(module, "__module__");
}
