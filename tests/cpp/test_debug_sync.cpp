// Debug-sync mode: the host waits after every Kokkos kernel, and each wait
// is an implicit sync named after the kernel, at the line that launched it,
// in the phase that was open.

#include <string>

#include "test_helpers.hpp"

namespace {

using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;

using cunumpy::profiling::DebugSync;

void kernel(const char* name) {
  Kokkos::parallel_for(
      name, Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 8),
      KOKKOS_LAMBDA(int){});
}

TEST(DebugSync, EveryKernelIsAWaitNamedAfterItAtItsLine) {
  auto counted = count_transfers();
  {
    DebugSync on;
    for (int i = 0; i < 3; ++i)
      kernel("step::advance");
    kernel("step::norm");
  }
  kernel("after"); // off again
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 4u) << counted.counter().report();
  for (const auto& event : events) {
    EXPECT_EQ(event.kind, EventKind::sync);
    EXPECT_TRUE(event.implicit);
    EXPECT_TRUE(event.blocking);
  }
  EXPECT_EQ(events[0].what, "debug_sync(after kernel \"step::advance\")");
  EXPECT_EQ(events[0].label, "step::advance");
  EXPECT_EQ(events[3].what, "debug_sync(after kernel \"step::norm\")");
  // The launching line (kernel() above is inlined or not: the test file).
  EXPECT_NE(events[0].site.file.find("test_debug_sync.cpp"), std::string::npos)
      << events[0].site.str();
  EXPECT_EQ(counted.counter().total(), 0u); // syncs are not transfers
}

TEST(DebugSync, WaitsCountInThePhaseAndImplicitFalseRejectsThem) {
  TransferBudget budget;
  budget.require("solve", Rule()
                              .allow(EventKind::sync, Limits().implicit(false))
                              .ignore({EventKind::device_copy}));
  {
    DebugSync on;
    auto solve = budget.phase("solve");
    kernel("solve::iterate");
  }
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, cunumpy::profiling::Limit::implicit);
  EXPECT_NE(violations[0].str().find("debug_sync(after kernel "
                                     "\"solve::iterate\")"),
            std::string::npos)
      << violations[0].str();
}

TEST(DebugSync, OffByDefault) {
  auto counted = count_transfers();
  kernel("quiet");
  EXPECT_EQ(counted.counter().syncs(), 0u) << counted.counter().report();
}

} // namespace
