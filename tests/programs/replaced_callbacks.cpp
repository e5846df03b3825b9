// cunumpy in-process (count_transfers, assert_no_transfers, TransferBudget)
// while another in-process tool replaces entries of Kokkos' table of
// callbacks, as Trilinos' counters do. Whatever the order, no counter or
// verdict says "complete" or "ok" when events may have been lost, the other
// tool keeps receiving its events, and a tool that forwards to cunumpy is
// left in front with nothing lost. Copies go through Kokkos' own tools entry
// points, so this runs on every Kokkos.
//
//   test_replaced_callbacks <case>   (cunumpy_first, tool_first, again,
//                                     region_counter, region_check,
//                                     chaining, budget, half_forwarder)

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"
#include "tool_events.hpp"

namespace {

using namespace cunumpy::profiling;
using namespace tool_events;

bool mentions(const std::vector<std::string>& lines, const char* text) {
  for (const std::string& line : lines)
    if (line.find(text) != std::string::npos)
      return true;
  return false;
}

bool assertion_fails(const char* expected) {
  try {
    assert_no_transfers([] { copy_to_device(); });
  } catch (const cunumpy::TransferError& error) {
    return std::strstr(error.what(), expected) != nullptr;
  }
  return false;
}

void cunumpy_first() {
  auto counted = count_transfers();
  copy_to_device();
  DeepCopyCounter::start(); // Tpetra's DeepCopyCounter::start()
  for (int i = 0; i < 4; ++i)
    copy_to_device();
  DeepCopyCounter::stop();
  copy_to_device();
  const TransferCounter& counter = counted.counter();
  CHECK_EQ(counter.complete(), false);
  CHECK_EQ(mentions(counter.losses(), "replaced cunumpy's Kokkos Tools "
                                      "callback(s) begin_deep_copy"),
           true);
  // Each copy is counted, or counted as lost.
  CHECK_EQ(counter.to_device() + counter.events_lost(), std::uint64_t(6));
  CHECK_EQ(counter.report().find("INCOMPLETE") != std::string::npos, true);
  // The other tool still gets its events: cunumpy forwards to it.
  CHECK_EQ(DeepCopyCounter::copies().load(), 4);
  // A scope opened after the repair sees every event and is complete.
  auto later = count_transfers();
  copy_to_device();
  CHECK_EQ(later.counter().to_device(), std::uint64_t(1));
  CHECK_EQ(later.counter().complete(), true);
}

void tool_first() {
  DeepCopyCounter::start(); // before cunumpy installs its callbacks
  auto counted = count_transfers();
  for (int i = 0; i < 3; ++i)
    copy_to_device();
  CHECK_EQ(counted.counter().to_device(), std::uint64_t(3));
  CHECK_EQ(counted.counter().complete(), true);
  CHECK_EQ(DeepCopyCounter::copies().load(), 3);
  assert_no_transfers([] {}); // nothing copied, nothing lost: passes
  CHECK_EQ(assertion_fails("1 host/device transfer(s)"), true);
}

void again() {
  auto counted = count_transfers();
  for (int i = 0; i < 5; ++i) {
    DeepCopyCounter::start();
    copy_to_device();
  }
  CHECK_EQ(counted.counter().complete(), false);
  CHECK_EQ(counted.counter().to_device() + counted.counter().events_lost(),
           std::uint64_t(5));
  CHECK_EQ(DeepCopyCounter::copies().load(), 5);
}

void region_counter() {
  TransferBudget budget;
  budget.require("step", Rule().allow(cunumpy::EventKind::to_device));
  region("step");
  copy_to_device();
  end_region();
  stop_region_counter(); // KokkosRegionCounter::stop()
  region("step");
  copy_to_device();
  end_region();
  CHECK_EQ(budget.violations().empty(), false);
  bool failed = false;
  try {
    budget.check();
  } catch (const cunumpy::TransferError& error) {
    failed = std::strstr(error.what(), "push_region") != nullptr &&
             std::strstr(error.what(), "events may be missing") != nullptr;
  }
  CHECK_EQ(failed, true);
}

/// Nothing but the check at region pushes and pops (at most every 10 ms)
/// finds a tool that took both ends of the copies: after it, cunumpy is in
/// front again.
void region_check() {
  auto counted = count_transfers();
  CopySwallower::start();
  copy_to_device(); // to the other tool only
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  region("step"); // cunumpy checks Kokkos' table and puts itself back
  copy_to_device();
  copy_to_device();
  end_region();
  CHECK_EQ(DeepCopyCounter::copies().load(), 3); // cunumpy forwards to it
  CHECK_EQ(counted.counter().to_device(), std::uint64_t(2));
  CHECK_EQ(counted.counter().complete(), false);
  CHECK_EQ(mentions(counted.counter().losses(),
                    "callback(s) begin_deep_copy, end_deep_copy"),
           true);
}

/// A tool that forwards the begins of copies and swallows their ends: once
/// cunumpy is back in front, the begins it forwards come back to it, but no
/// end ever does. Three copies before cunumpy noticed it lost their ends;
/// the count is never complete.
void half_forwarder() {
  auto counted = count_transfers();
  HalfForwarder::install();
  for (int i = 0; i < 3; ++i)
    copy_to_device();
  CHECK_EQ(counted.counter().complete(), false); // the read finds the tool
  for (int i = 0; i < 3; ++i)
    copy_to_device();
  CHECK_EQ(counted.counter().complete(), false);
}

void chaining() {
  auto counted = count_transfers();
  copy_to_device();
  ChainingTool::install(); // keeps cunumpy's callbacks and forwards to them
  copy_to_device();
  // Reading the counter checks Kokkos' table: the replacement is found, and
  // the next copy shows that it forwards to cunumpy.
  CHECK_EQ(counted.counter().to_device(), std::uint64_t(2));
  copy_to_device();
  copy_to_device();
  CHECK_EQ(counted.counter().to_device(), std::uint64_t(4));
  CHECK_EQ(counted.counter().complete(), true);
  CHECK_EQ(ChainingTool::copies().load(), 3);
  assert_no_transfers([] {});
}

void budget_after_replacement() {
  TransferBudget budget;
  budget.require("step", Rule().allow(cunumpy::EventKind::to_device));
  region("step");
  DeepCopyCounter::start();
  copy_to_device();
  end_region();
  const auto violations = budget.violations();
  CHECK_EQ(violations.size(), std::size_t(1));
  if (!violations.empty())
    CHECK_EQ(violations[0].limit == Limit::events_lost, true);
  CHECK_EQ(assertion_fails("events may have been lost") ||
               assertion_fails("1 host/device transfer(s)"),
           true);
}

} // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::Impl::ensure_hooks();
  device_allocation();
  const std::string which = argc > 1 ? argv[1] : "";
  if (which == "cunumpy_first")
    cunumpy_first();
  else if (which == "tool_first")
    tool_first();
  else if (which == "again")
    again();
  else if (which == "region_counter")
    region_counter();
  else if (which == "region_check")
    region_check();
  else if (which == "chaining")
    chaining();
  else if (which == "budget")
    budget_after_replacement();
  else if (which == "half_forwarder")
    half_forwarder();
  else {
    std::cerr << "unknown case '" << which << "'\n";
    return 2;
  }
  return failures() == 0 ? 0 : 1;
}
