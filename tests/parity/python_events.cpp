// The Python module's events in the budget parity test: a test-only
// extension whose run_events(json_text) makes the events of a case through
// the Kokkos the cunumpy module uses, as C++ code called from Python would.

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <string>

#include "parity_events.hpp"

PYBIND11_MODULE(cunumpy_parity_events, module) {
  module.def(
      "run_events",
      [](const std::string& events) {
        cunumpy_parity::run_case(nlohmann::json::parse(events));
      },
      pybind11::arg("events"),
      "Makes the events of a parity case (JSON text of its 'events').");
}
