// A Kokkos extension of the project's own for the plugin's Python-line
// tests: a Python program drives Kokkos through it, as peclet-flow or
// pet-kokkos do, and the plugin (loaded through KOKKOS_TOOLS_LIBS) names
// the Python line of each event. Built without debug information and
// stripped, so its frames are module+offset, as in a wheel. The events go
// through Kokkos' own tools entry points (tests/programs/tool_events.hpp),
// on any Kokkos.

#include <pybind11/pybind11.h>

#include "tool_events.hpp"

PYBIND11_MODULE(cunumpy_python_workload, module) {
  module.def("initialize", [] {
    Kokkos::initialize();
    tool_events::device_allocation();
  });
  module.def("finalize", [] { Kokkos::finalize(); });
  module.def("copy_to_device",
             [](std::uint64_t bytes) { tool_events::copy_to_device(bytes); });
  module.def("copy_to_host",
             [](std::uint64_t bytes) { tool_events::copy_to_host(bytes); });
  module.def("region", [](const std::string& name) {
    tool_events::region(name.c_str());
  });
  module.def("end_region", [] { tool_events::end_region(); });
  module.def(
      "copy_without_the_gil",
      [](std::uint64_t bytes) {
        pybind11::gil_scoped_release release;
        tool_events::copy_to_device(bytes);
      },
      "A copy made with the GIL released: no Python line can be read.");
}
