// synchronize: a fence the program asked for, recorded as one explicit sync.

#include "test_helpers.hpp"

namespace {

using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;
using cunumpy_tests::site;

TEST(Synchronize, IsOneExplicitSyncAtTheCallersLine) {
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  cunumpy::synchronize();
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.total(), 0u);
  // Kokkos 4 reports a global fence once per execution space (Serial and
  // OpenMP here): still one wait, one sync.
  EXPECT_EQ(counter.syncs(), 1u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), counter.syncs());
  for (const auto& event : events) {
    EXPECT_EQ(event.kind, EventKind::sync);
    EXPECT_TRUE(event.blocking);
    EXPECT_FALSE(event.implicit);
    EXPECT_EQ(event.site.str(), site(__FILE__, line));
  }
  EXPECT_EQ(counter.report().find("[implicit]"), std::string::npos)
      << counter.report();
}

TEST(Synchronize, ARawGlobalFenceIsOneExplicitSync) {
  auto counted = count_transfers();
  Kokkos::fence();
  // Kokkos 3.4 reports no fence events; later ones report one per
  // execution space, merged into one sync, of which only a device's part
  // is a wait for the device.
  const std::uint64_t expected =
      KOKKOS_VERSION >= 30500 && cunumpy::has_device_backend ? 1 : 0;
  EXPECT_EQ(counted.counter().syncs(), expected);
  for (const auto& event : counted.counter().events())
    EXPECT_FALSE(event.implicit) << event.what;
}

TEST(Synchronize, AnInstance) {
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  cunumpy::synchronize(Kokkos::DefaultExecutionSpace());
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::sync);
  EXPECT_FALSE(events[0].implicit);
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
}

TEST(Synchronize, IsNotATransfer) {
  EXPECT_NO_THROW(
      cunumpy::profiling::assert_no_transfers([] { cunumpy::synchronize(); }));
}

} // namespace
