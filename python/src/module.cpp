#include "module.hpp"

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/version.hpp>

#include "support/identity.hpp"

namespace {
/// An address inside this module: its frames are cunumpy's, never a call
/// site (a user's module may also be called _core).
const char module_marker = 0;
} // namespace

PYBIND11_MODULE(_core, module) {
  // The core the loader gave this module (the one the process loaded
  // first, maybe a plugin's of another install) is the build it was made
  // against, or nothing of it is used (support/identity.hpp).
  if (const std::string mismatch = cunumpy::Impl::core_mismatch(
          "the Python module", reinterpret_cast<const void*>(&module_marker));
      !mismatch.empty())
    throw pybind11::import_error("cunumpy: " + mismatch);
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
