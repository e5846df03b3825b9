// Events the recorder cannot record (memory runs out) are counted, and every
// counter, budget and assertion that may have missed them says so and
// fails: never a short count taken for a complete one. The failures are
// injected at the recorder's allocation points (a test hook).

#include <cstring>
#include <string>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"
#include "recorder/recorder.hpp"

namespace {

using namespace cunumpy::profiling;

/// A copy host to "Cuda" under a label not seen before, so that recording
/// it interns a string (an allocation point).
void copy_with_new_label() {
  static int serial = 0;
  static double data[1];
  const std::string label = "fresh_" + std::to_string(serial++);
  Kokkos::Tools::beginDeepCopy(Kokkos::Tools::make_space_handle("Cuda"), label,
                               data, Kokkos::Tools::make_space_handle("Host"),
                               label, data, 8);
  Kokkos::Tools::endDeepCopy();
}

bool message_has(const std::exception& error, const char* text) {
  return std::strstr(error.what(), text) != nullptr;
}

} // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  {
    auto counted = count_transfers();
    copy_with_new_label();
    cunumpy::Impl::inject_allocation_failures(1);
    copy_with_new_label(); // cannot be recorded
    copy_with_new_label();
    const TransferCounter& counter = counted.counter();
    CHECK_EQ(counter.to_device(), std::uint64_t(2));
    CHECK_EQ(counter.events_lost(), std::uint64_t(1));
    CHECK_EQ(counter.complete(), false);
    CHECK_EQ(counter.losses().size(), std::size_t(1));
    CHECK_EQ(counter.report().find("1 event(s) could not be recorded") !=
                 std::string::npos,
             true);
  }
  {
    // assert_no_transfers around a copy that could not be recorded.
    bool failed = false;
    try {
      assert_no_transfers([] {
        cunumpy::Impl::inject_allocation_failures(1);
        copy_with_new_label();
      });
    } catch (const cunumpy::TransferError& error) {
      failed = message_has(error, "cannot tell that none happened: 1 "
                                  "event(s) could not be recorded");
    }
    CHECK_EQ(failed, true);
  }
  {
    // A budget whose counter could not take an event (its aggregate table
    // out of memory) fails its check.
    TransferBudget budget;
    budget.require("step", Rule().allow(cunumpy::EventKind::to_device));
    Kokkos::Profiling::pushRegion("step");
    copy_with_new_label();
    Kokkos::Profiling::popRegion();
    CHECK_EQ(budget.violations().empty(), true);
    Kokkos::Profiling::pushRegion("step");
    cunumpy::Impl::inject_allocation_failures(2);
    copy_with_new_label();
    Kokkos::Profiling::popRegion();
    cunumpy::Impl::inject_allocation_failures(0);
    const auto violations = budget.violations();
    CHECK_EQ(violations.size(), std::size_t(1));
    if (!violations.empty())
      CHECK_EQ(violations[0].limit == Limit::events_lost, true);
    bool failed = false;
    try {
      budget.check();
    } catch (const cunumpy::TransferError& error) {
      failed = message_has(error, "event(s) are missing");
    }
    CHECK_EQ(failed, true);
  }
  {
    // A scope opened afterwards is complete.
    auto counted = count_transfers();
    copy_with_new_label();
    CHECK_EQ(counted.counter().complete(), true);
  }
  return failures() == 0 ? 0 : 1;
}
