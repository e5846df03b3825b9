// Copies made in modules of the program named _core.<tag>.so, as cunumpy's
// Python module is: cunumpy knows its own modules by their addresses, not
// by their names, so the copies' call sites are the module's line (with
// debug information) or module+0xOFFSET (stripped), never skipped (the
// caller's line, or <unknown> where no frame above has a line).

#include <regex>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"
#include "test_paths.hpp"

extern "C" int copy_in_core_module();
extern "C" void copy_in_core_module_on_thread();
extern "C" void copy_in_stripped_core_module_on_thread();

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  auto counted = cunumpy::profiling::count_transfers();
  const int line = copy_in_core_module();
  copy_in_core_module_on_thread();
  copy_in_stripped_core_module_on_thread();
  const auto events = counted.counter().events();
  CHECK_EQ(events.size(), std::size_t(3));
  if (events.size() == 3) {
    const std::string site =
        std::string(CUNUMPY_MODULE_SOURCE) + ":" + std::to_string(line);
    CHECK_EQ(events[0].site.str(), site);
    CHECK_EQ(events[1].site.str(), site);
    const std::string stripped = events[2].site.str();
    if (!std::regex_match(
            stripped, std::regex(R"(_core\.stripped_test\.so\+0x[0-9a-f]+)")))
      CHECK_EQ(stripped, "_core.stripped_test.so+0x<offset>");
  }
  return failures() == 0 ? 0 : 1;
}
