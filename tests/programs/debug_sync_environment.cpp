// CUNUMPY_DEBUG_SYNC=1 turns debug-sync mode on for the library without
// code: each kernel is followed by a wait, recorded as an implicit sync
// named after the kernel. Run with the variable set (one wait per kernel)
// and without it (none).

#include <cstdlib>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const char* value = std::getenv("CUNUMPY_DEBUG_SYNC");
  const bool on = value != nullptr && std::string(value) == "1";
  auto counted = cunumpy::profiling::count_transfers();
  for (int i = 0; i < 3; ++i)
    Kokkos::parallel_for(
        "environment::kernel",
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 8),
        KOKKOS_LAMBDA(int){});
  const auto& counter = counted.counter();
  CHECK_EQ(counter.syncs(), std::uint64_t(on ? 3 : 0));
  const auto events = counter.events();
  if (on && !events.empty()) {
    CHECK_EQ(events[0].what,
             std::string("debug_sync(after kernel \"environment::kernel\")"));
    CHECK_EQ(events[0].implicit, true);
  }
  CHECK_EQ(counter.total(), std::uint64_t(0));
  return failures() == 0 ? 0 : 1;
}
