// The plugin's program of the budget parity test: the events of case
// <index> of the cases file, made through Kokkos' tools entry points, by a
// program that knows nothing of cunumpy. The rules come from the rule file
// the test writes (CUNUMPY_BUDGET); the plugin's JSON report has the
// violations.
//
//   parity_events <cases.json> <index>

#include "parity_events.hpp"

#include <iostream>
#include <string>

#include <Kokkos_Core.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: parity_events <cases.json> <index>\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy_parity::run_case(
      cunumpy_parity::read_case(argv[1], std::stoul(argv[2])).at("events"));
  return 0;
}
