// A source of events besides Kokkos Tools and CUDA's record, as another
// backend's record would be (src/core/recorder/event_source.hpp): named
// when registered, fed to the recorder through the one interface, and
// reported under its name by counters and budgets, with no public header
// knowing of it.

#include <gtest/gtest.h>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "recorder/event_source.hpp"
#include "recorder/recorder.hpp"
#include "synthetic_events.hpp"

namespace {

namespace synthetic = cunumpy_tests::synthetic;
using cunumpy::EventKind;
using cunumpy::Impl::EventSource;
using cunumpy::Impl::kokkos_source;
using cunumpy::Impl::RawEvent;
using cunumpy::Impl::Recorder;
using cunumpy::Impl::RecorderLock;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;

/// A source named "test-hip": the events the test gives it reach the
/// recorder at its next read, as late events.
class TestSource final : public EventSource {
public:
  std::string_view name() const noexcept override { return "test-hip"; }
  void drain(std::vector<RawEvent>& out,
             const RecorderLock&) noexcept override {
    const std::lock_guard lock(mutex_);
    out.insert(out.end(), ready_.begin(), ready_.end());
    ready_.clear();
  }
  double horizon() const noexcept override {
    return std::numeric_limits<double>::infinity(); // nothing more to come
  }
  void lock_for_fork() noexcept override { mutex_.lock(); }
  void unlock_after_fork() noexcept override { mutex_.unlock(); }

  void give(const RawEvent& event) {
    const std::lock_guard lock(mutex_);
    ready_.push_back(event);
  }

private:
  std::mutex mutex_;
  std::vector<RawEvent> ready_;
};

/// The one test source, fed to the recorder (never destroyed: the recorder
/// keeps it).
TestSource& test_source() {
  static TestSource* source = [] {
    auto* made = new TestSource();
    EXPECT_TRUE(Recorder::instance().sources().add(*made));
    return made;
  }();
  return *source;
}

/// A copy of `nbytes` to the device that only the test source saw, made
/// now by no thread of the program: the recorder places it by its time.
RawEvent device_copy_now(std::uint64_t nbytes) {
  Recorder& recorder = Recorder::instance();
  RawEvent event;
  event.kind = EventKind::to_device;
  event.nbytes = nbytes;
  event.origin = recorder.sources().register_name("test-hip");
  event.late = true;
  event.start = recorder.now();
  event.region_thread = cunumpy::Impl::unplaced;
  const RecorderLock lock = recorder.lock();
  event.description = recorder.strings(lock).intern("hipMemcpy(nbytes=4096)");
  event.src_space = recorder.strings(lock).intern("Host");
  event.dst_space = recorder.strings(lock).intern("HIP");
  return event;
}

TEST(EventSources, ANameHasOneIdFromEveryThread) {
  Recorder& recorder = Recorder::instance();
  EXPECT_EQ(recorder.sources().name(kokkos_source), "kokkos");
  EXPECT_EQ(recorder.sources().register_name("kokkos"), kokkos_source);
  std::vector<std::uint8_t> ids(4);
  std::vector<std::thread> threads;
  for (std::uint8_t& id : ids)
    threads.emplace_back([&id, &recorder] {
      id = recorder.sources().register_name("test-sycl");
    });
  for (std::thread& thread : threads)
    thread.join();
  for (const std::uint8_t id : ids)
    EXPECT_EQ(id, ids[0]);
  EXPECT_NE(ids[0], kokkos_source);
  EXPECT_NE(ids[0], cunumpy::Impl::EventSources::other);
  EXPECT_EQ(recorder.sources().name(ids[0]), "test-sycl");
  EXPECT_NE(recorder.sources().register_name("test-openacc"), ids[0]);
  // A name too long to keep is reported as "other", never as another's.
  const std::string long_name(cunumpy::Impl::EventSources::max_name + 1, 'x');
  EXPECT_EQ(recorder.sources().register_name(long_name),
            cunumpy::Impl::EventSources::other);
  EXPECT_EQ(recorder.sources().name(cunumpy::Impl::EventSources::other),
            "other");
}

TEST(EventSources, AThirdSourcesEventIsCountedAndShownUnderItsName) {
  cunumpy::Impl::ensure_hooks();
  synthetic::device_allocation();
  TestSource& source = test_source();
  auto counted = cunumpy::profiling::count_transfers();
  {
    synthetic::Region step("step");
    source.give(device_copy_now(4096));
  }
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.bytes_to_device(), 4096u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].source, "test-hip");
  EXPECT_EQ(events[0].what, "hipMemcpy(nbytes=4096)");
  const auto sites = counter.sites();
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].source, "test-hip");
  const std::string report = counter.report();
  EXPECT_NE(report.find("hipMemcpy(nbytes=4096) (x1) [test-hip]"),
            std::string::npos)
      << report;
}

TEST(EventSources, ABudgetChecksAThirdSourcesEventInItsPhase) {
  cunumpy::Impl::ensure_hooks();
  synthetic::device_allocation();
  TestSource& source = test_source();
  TransferBudget budget;
  budget.require("step", Rule()); // no copies
  {
    synthetic::Region step("step");
    source.give(device_copy_now(4096));
  }
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].phase, "step");
  EXPECT_EQ(violations[0].kind, EventKind::to_device);
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].source, "test-hip");
  EXPECT_NE(violations[0].str().find("[test-hip]"), std::string::npos)
      << violations[0].str();
  EXPECT_EQ(cunumpy::profiling::verdict(violations),
            cunumpy::profiling::Verdict::broken);
}

} // namespace
