// Regions popped where none was open, as real libraries make them, for the
// plugin's tests (tests/plugin/test_unbalanced_regions.py). The program's
// phases:
// "setup" makes a copy to the device, "solve" one to the host.
//
//   unbalanced_regions before-init [after]  a region pushed before
//                       Kokkos::initialize (no tool loaded yet) is popped
//                       after "solve"; with `after`, a copy to the host is
//                       made between "solve" and that pop
//   unbalanced_regions library [window]  inside "setup", a library call
//                       (libunbalanced_library.so, as Tpetra's
//                       fillComplete) pops three regions it never pushed,
//                       closing "setup" early; with `window`, a library
//                       call and the program then copy to the device
//                       before the program's pop of "setup"

#include <cstdio>
#include <string>

#include "tool_events.hpp"

namespace unbalanced_library {
void fill_complete();
void put_scalar();
} // namespace unbalanced_library

int main(int argc, char** argv) {
  using namespace tool_events;
  const std::string which = argc > 1 ? argv[1] : "";
  const std::string option = argc > 2 ? argv[2] : "";
  if (which != "before-init" && which != "library") {
    std::fprintf(stderr, "usage: unbalanced_regions before-init|library "
                         "[after|window]\n");
    return 2;
  }
  if (which == "before-init")
    region("pushed before the tool"); // no tool is loaded: no one sees it
  Kokkos::initialize(argc, argv);
  device_allocation();
  region("setup");
  copy_to_device(8);
  if (which == "library") {
    unbalanced_library::fill_complete();
    if (option == "window") {
      unbalanced_library::put_scalar();
      copy_to_device(8);
    }
  }
  end_region();
  region("solve");
  copy_to_host(8);
  end_region();
  if (which == "before-init") {
    if (option == "after")
      copy_to_host(8);
    end_region(); // the region pushed before the tool
  }
  Kokkos::finalize();
  std::printf("unbalanced_regions: %s %s\n", which.c_str(), option.c_str());
  return 0;
}
