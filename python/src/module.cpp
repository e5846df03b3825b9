#include "module.hpp"

PYBIND11_MODULE(_core, module) {
  module.doc() = "The compiled core of cunumpy: Kokkos device arrays, copies "
                 "and the shared transfer recorder.";
  using namespace cunumpy::python;
  bind_lifecycle(module);
  bind_device_array(module);
  bind_conversions(module);
  bind_profiling(module);
  bind_budget(module);
  bind_sync(module);
}
