#ifndef CUNUMPY_TESTS_PARITY_EVENTS_HPP
#define CUNUMPY_TESTS_PARITY_EVENTS_HPP

// The events of a budget case of tests/parity/cases.json, made through
// Kokkos' own tools entry points (tests/cpp/synthetic_events.hpp), so that
// the C++ library, the Python module and the plugin all receive exactly the
// events Kokkos would send. Kokkos only: the plugin's program knows nothing
// of cunumpy.
//
//   events := [ step, ... ]
//   step   := {"region": name, "do": events}           a Kokkos region
//           | {"copy": kind, "bytes": n, "blocking": b} a deep copy
//           | {"scalar_read": n}                        deep_copy(scalar, view)
//           | {"fence": name}                           a fence of an instance
//           | {"replace_copy_callback": true}           another tool takes
//                                                       begin_deep_copy

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include "../cpp/synthetic_events.hpp"

namespace cunumpy_parity {

namespace synthetic = cunumpy_tests::synthetic;

/// The copies the other tool of "replace_copy_callback" saw.
inline std::atomic<int>& replacer_copies() {
  static std::atomic<int> count{0};
  return count;
}

inline void replacer_on_copy(Kokkos_Profiling_SpaceHandle, const char*,
                             const void*, Kokkos_Profiling_SpaceHandle,
                             const char*, const void*, uint64_t) {
  ++replacer_copies();
}

inline void copy(const std::string& kind, std::uint64_t bytes, bool blocking) {
  const synthetic::Fence fence =
      blocking ? synthetic::Fence::inside : synthetic::Fence::none;
  if (kind == "to_device")
    synthetic::copy("Cuda", "Host", bytes, "parity", fence);
  else if (kind == "to_host")
    synthetic::copy("Host", "Cuda", bytes, "parity", fence);
  else if (kind == "device_copy")
    synthetic::copy("Cuda", "Cuda", bytes, "parity", fence);
  else
    throw std::invalid_argument("parity: unknown copy kind '" + kind + "'");
}

/// The events of a case: those of a program with a device (an allocation
/// there first), then `steps`.
inline void run_events(const nlohmann::json& steps);
inline void run_case(const nlohmann::json& steps) {
  synthetic::device_allocation();
  run_events(steps);
}

/// Makes the events of `steps` (see the grammar above).
inline void run_events(const nlohmann::json& steps) {
  for (const nlohmann::json& step : steps) {
    if (step.contains("region")) {
      synthetic::Region region(step.at("region").get<std::string>());
      run_events(step.at("do"));
    } else if (step.contains("copy")) {
      copy(step.at("copy").get<std::string>(),
           step.at("bytes").get<std::uint64_t>(),
           step.value("blocking", false));
    } else if (step.contains("scalar_read")) {
      synthetic::scalar_read("Cuda", "norm", synthetic::Fence::inside,
                             step.at("scalar_read").get<std::uint64_t>());
    } else if (step.contains("fence")) {
      synthetic::fence(step.at("fence").get<std::string>());
    } else if (step.contains("replace_copy_callback")) {
      Kokkos::Tools::Experimental::set_begin_deep_copy_callback(
          &replacer_on_copy);
    } else {
      throw std::invalid_argument("parity: unknown step " + step.dump());
    }
  }
}

/// Case `index` of the cases file at `path`.
inline nlohmann::json read_case(const std::string& path, std::size_t index) {
  std::ifstream file(path);
  if (!file)
    throw std::invalid_argument("parity: cannot read " + path);
  return nlohmann::json::parse(file).at("cases").at(index);
}

} // namespace cunumpy_parity

#endif
