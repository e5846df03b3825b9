// Kokkos finalized and initialized again with cunumpy's library in the
// program (Kokkos 3; Kokkos 4 refuses a second initialize: skipped, 77).
// With a tool library loaded too (--paused; ctest loads the test tool),
// Kokkos pauses the tools at its finalize and restarts none for the second
// session: cunumpy puts its callbacks back at the first cunumpy call of the
// new session, counts what comes after, and says that what came before may
// be missing. Without one, cunumpy's callbacks stay, and nothing is lost.

#include <cstring>
#include <string>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"
#include "tool_events.hpp"

int main(int argc, char** argv) {
#if KOKKOS_VERSION >= 40000
  (void)argc;
  (void)argv;
  return 77;
#else
  using namespace cunumpy::profiling;
  using namespace tool_events;
  const bool paused = argc > 1 && std::strcmp(argv[1], "--paused") == 0;
  Kokkos::initialize(argc, argv);
  auto budget = std::make_unique<TransferBudget>();
  budget->require("step", Rule());
  device_allocation();
  Kokkos::finalize();

  Kokkos::initialize(argc, argv);
  copy_to_device(); // before any cunumpy call: Kokkos calls no tool
  {
    auto counted = count_transfers(); // puts cunumpy's callbacks back
    region("step");
    copy_to_device();
    end_region();
    CHECK_EQ(counted.counter().to_device(), std::uint64_t(1));
  }
  const auto violations = budget->violations();
  bool forbidden = false, lost = false;
  for (const Violation& violation : violations) {
    forbidden = forbidden || (violation.limit == Limit::forbidden &&
                              violation.phase == "step");
    lost =
        lost ||
        (violation.limit == Limit::events_lost && !violation.details.empty() &&
         violation.details[0].find("initialized again") != std::string::npos);
  }
  CHECK_EQ(forbidden, true); // the second session's copy is counted
  CHECK_EQ(lost, paused);    // what came before may be missing
  CHECK_EQ(budget->total().to_device(), std::uint64_t(paused ? 1 : 2));
  budget.reset();
  Kokkos::finalize();
  return failures() == 0 ? 0 : 1;
#endif
}
