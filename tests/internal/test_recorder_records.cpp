// What the recorder gives its sinks for synthetic Kokkos Tools events (see
// tests/cpp/synthetic_events.hpp): DualView events paired with the copy
// Kokkos made for them, kernel spans, and the copies an unknown memory
// space left uncounted. These records reach the plugin's report and trace,
// not the public counters, so a sink of the test's own receives them here.

#include <algorithm>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "call_sites/stack_capture.hpp"
#include "recorder/recorder.hpp"
#include "recorder/records.hpp"
#include "recorder/spaces.hpp"
#include "synthetic_events.hpp"

namespace {

namespace synthetic = cunumpy_tests::synthetic;
using cunumpy::EventKind;
using cunumpy::Impl::DualViewEvent;
using cunumpy::Impl::KernelSpan;
using cunumpy::Impl::RawEvent;
using cunumpy::Impl::Recorder;
using cunumpy::Impl::RecorderLock;

/// Keeps every record it is given, while attached.
class RecordingSink final : public cunumpy::Impl::EventSink {
public:
  RecordingSink() {
    cunumpy::Impl::ensure_hooks();
    Recorder::instance().attach(this);
  }
  ~RecordingSink() override { Recorder::instance().detach(this); }
  RecordingSink(const RecordingSink&) = delete;
  RecordingSink& operator=(const RecordingSink&) = delete;

  void on_event(const RawEvent& event, const RecorderLock&) override {
    events_.push_back(event);
  }
  void on_dual_view(const DualViewEvent& event, const RecorderLock&) override {
    dual_views_.push_back(event);
  }
  void on_kernel(const KernelSpan& kernel, const RecorderLock&) override {
    kernels_.push_back(kernel);
  }

  /// What the sink received until now (late events and losses given first).
  std::vector<RawEvent> events() const {
    const RecorderLock lock = cunumpy::Impl::lock_recorder();
    return events_;
  }
  std::vector<DualViewEvent> dual_views() const {
    const RecorderLock lock = cunumpy::Impl::lock_recorder();
    return dual_views_;
  }
  std::vector<KernelSpan> kernels() const {
    const RecorderLock lock = cunumpy::Impl::lock_recorder();
    return kernels_;
  }
  /// The string of a StringTable id.
  std::string text(std::uint32_t id) const {
    Recorder& recorder = Recorder::instance();
    const RecorderLock lock = recorder.lock();
    return std::string(recorder.strings(lock).view(id));
  }

private:
  std::vector<RawEvent> events_;
  std::vector<DualViewEvent> dual_views_;
  std::vector<KernelSpan> kernels_;
};

const void* before(const void* pointer, std::ptrdiff_t bytes) {
  return static_cast<const char*>(pointer) - bytes;
}

TEST(RecorderDualView, ASyncIsPairedWithTheCopyKokkosMadeForIt) {
  RecordingSink sink;
  const void* device_data = synthetic::fake_memory(4);
  const void* host_data = synthetic::fake_memory(5);
  synthetic::dual_view_sync("dual", 800, true, device_data, host_data);
  const auto events = sink.events();
  const auto dual_views = sink.dual_views();
  ASSERT_EQ(events.size(), 1u);
  ASSERT_EQ(dual_views.size(), 1u);
  const DualViewEvent& sync = dual_views[0];
  EXPECT_TRUE(sync.sync);
  EXPECT_TRUE(sync.device);
  EXPECT_TRUE(sync.copied);
  EXPECT_EQ(sync.pointer, device_data);
  EXPECT_EQ(sync.source, host_data);
  EXPECT_EQ(sync.copy_kind, EventKind::to_device);
  EXPECT_EQ(sync.nbytes, 800u);
  EXPECT_EQ(sync.site, events[0].site);
  EXPECT_NE(sync.site, 0u);
  EXPECT_EQ(sink.text(sync.label), "dual");
}

TEST(RecorderDualView, ASyncMayNameTheAllocationsHeaderBeforeItsData) {
  // Kokkos reports the address of the allocation, which may be the view's
  // header, 128 bytes before its data.
  RecordingSink sink;
  const void* data = synthetic::fake_memory(4);
  synthetic::begin_copy("Host", "Cuda", 64, "dual", data,
                        synthetic::fake_memory(5), "dual");
  synthetic::end_copy();
  Kokkos::Tools::syncDualView("dual", before(data, 128), false);
  const auto dual_views = sink.dual_views();
  ASSERT_EQ(dual_views.size(), 1u);
  EXPECT_TRUE(dual_views[0].copied);
  EXPECT_FALSE(dual_views[0].device);
  EXPECT_EQ(dual_views[0].copy_kind, EventKind::to_host);
}

TEST(RecorderDualView,
     ASyncOfAnotherAllocationOrAfterAnotherEventCopiedNothing) {
  RecordingSink sink;
  const void* data = synthetic::fake_memory(4);
  const auto copy_to = [&](const void* dst) {
    synthetic::begin_copy("Cuda", "Host", 64, "dual", dst,
                          synthetic::fake_memory(5), "dual");
    synthetic::end_copy();
  };
  copy_to(data);
  Kokkos::Tools::syncDualView("far", before(data, 512), true); // too far
  copy_to(data);
  Kokkos::Tools::syncDualView("after", before(data, -8), true); // past it
  copy_to(data);
  Kokkos::Tools::modifyDualView("other", synthetic::fake_memory(6), true);
  Kokkos::Tools::syncDualView("late", data, true); // the copy was before
  Kokkos::Tools::syncDualView("nothing", data, true);
  const auto dual_views = sink.dual_views();
  ASSERT_EQ(dual_views.size(), 5u);
  for (const DualViewEvent& event : dual_views) {
    SCOPED_TRACE(sink.text(event.label));
    EXPECT_FALSE(event.copied);
    EXPECT_NE(event.site, 0u); // its own call site
  }
  EXPECT_FALSE(dual_views[2].sync); // the modify
  EXPECT_TRUE(dual_views[2].device);
  EXPECT_EQ(sink.events().size(), 3u);
}

TEST(RecorderDualView, AModifyIsRecordedWithItsSide) {
  RecordingSink sink;
  Kokkos::Tools::modifyDualView("dual", synthetic::fake_memory(5), false);
  Kokkos::Tools::modifyDualView("dual", synthetic::fake_memory(4), true);
  const auto dual_views = sink.dual_views();
  ASSERT_EQ(dual_views.size(), 2u);
  EXPECT_FALSE(dual_views[0].sync);
  EXPECT_FALSE(dual_views[0].device);
  EXPECT_EQ(dual_views[0].pointer, synthetic::fake_memory(5));
  EXPECT_TRUE(dual_views[1].device);
  EXPECT_TRUE(sink.events().empty());
}

TEST(RecorderCopies, AScalarReadsWaitFollowsItsCopyOnEveryThread) {
  // A scalar read is a copy then its wait, together whatever other threads
  // do meanwhile.
  constexpr int reads = 3000;
  RecordingSink sink;
  auto read_loop = [] {
    for (int i = 0; i < reads; ++i) {
      Kokkos::Profiling::pushRegion("step");
      synthetic::scalar_read("Cuda", "norm", synthetic::Fence::none);
      if (i % 3 == 0)
        synthetic::scalar_read("Cuda", "norm", synthetic::Fence::none);
      Kokkos::Profiling::popRegion();
    }
  };
  std::thread worker(read_loop);
  read_loop();
  worker.join();
  const auto events = sink.events();
  constexpr std::size_t reads_made = reads + reads / 3; // per thread
  ASSERT_EQ(events.size(), 4 * reads_made);
  std::size_t copies = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const RawEvent& event = events[i];
    if (event.kind != EventKind::to_host)
      continue;
    ++copies;
    ASSERT_TRUE(event.scalar);
    EXPECT_EQ(event.nbytes, sizeof(double));
    ASSERT_LT(i + 1, events.size());
    const RawEvent& wait = events[i + 1];
    EXPECT_EQ(wait.kind, EventKind::sync) << "after copy " << copies;
    EXPECT_TRUE(wait.implicit);
    EXPECT_TRUE(wait.blocking);
    EXPECT_EQ(wait.nbytes, 0u);
    EXPECT_EQ(wait.thread, event.thread);
    EXPECT_EQ(wait.site, event.site);
    EXPECT_EQ(wait.start, event.start);
    EXPECT_EQ(wait.duration, event.duration);
  }
  EXPECT_EQ(copies, 2 * reads_made);
}

TEST(RecorderCopies, ALoopCopyingFromSeveralViewsInternsNothingOnceWarm) {
  // A time step copies from several views in turn (its state, then its
  // diagnostics), one of them unnamed: after the first round, every id is
  // in the thread's caches, so no copy interns a string under the
  // recorder's lock. A failure injected at the next allocation point, where
  // that path starts, would lose the event; none is lost.
  RecordingSink sink;
  const char* const labels[] = {"state", "diagnostics", "fluxes", ""};
  const auto round = [&labels] {
    for (const char* label : labels)
      synthetic::copy("Host", "Cuda", 64, label);
  };
  constexpr int rounds = 20;
  for (int i = 0; i < rounds; ++i) {
    if (i == 1) // the first round interned the labels and the site
      cunumpy::Impl::inject_allocation_failures(1);
    round();
  }
  cunumpy::Impl::inject_allocation_failures(0);
  const auto events = sink.events();
  ASSERT_EQ(events.size(), rounds * std::size(labels));
  for (std::size_t i = 0; i < events.size(); ++i)
    EXPECT_EQ(sink.text(events[i].label), labels[i % std::size(labels)]);
}

TEST(RecorderRegions, ATimeStepOfManyNamedRegionsInternsNothingOnceWarm) {
  // Real codes name tens of phases a step: 24 regions, pushed and popped
  // in turn, find their names in the thread's cache after the first step,
  // as the injected failure shows (a lost record would be counted).
  auto counted = cunumpy::profiling::count_transfers();
  std::vector<std::string> names;
  for (int i = 0; i < 24; ++i)
    names.push_back("phase_" + std::to_string(i));
  for (int step = 0; step < 10; ++step) {
    if (step == 1) // the first step interned the names
      cunumpy::Impl::inject_allocation_failures(1);
    for (const std::string& name : names) {
      Kokkos::Profiling::pushRegion(name);
      Kokkos::Profiling::popRegion();
    }
  }
  cunumpy::Impl::inject_allocation_failures(0);
  EXPECT_EQ(counted.counter().events_lost(), 0u);
}

using HostValues = Kokkos::View<double*, Kokkos::HostSpace>;

// Kernels on the host, in free functions: nvcc rejects a Kokkos lambda in a
// GoogleTest body (a private member).
void fill_values(const char* name, const HostValues& values, double factor) {
  Kokkos::parallel_for(
      name,
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0,
                                                             values.extent(0)),
      KOKKOS_LAMBDA(int i) { values(i) = factor * i; });
}

double sum_of(const char* name, const HostValues& values) {
  double result = 0;
  Kokkos::parallel_reduce(
      name,
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0,
                                                             values.extent(0)),
      KOKKOS_LAMBDA(int i, double& partial) { partial += values(i); }, result);
  return result;
}

/// Keeps the region pushes it is given, and how many regions the
/// recorder shows open on the pushing thread at each.
class PushSink final : public cunumpy::Impl::EventSink {
public:
  PushSink() {
    cunumpy::Impl::ensure_hooks();
    Recorder::instance().attach(this);
  }
  ~PushSink() override { Recorder::instance().detach(this); }
  PushSink(const PushSink&) = delete;
  PushSink& operator=(const PushSink&) = delete;

  void on_event(const RawEvent&, const RecorderLock&) override {}
  void on_region_push(const cunumpy::Impl::RegionPush& push,
                      const RecorderLock& lock) override {
    pushes.push_back(push);
    const auto open = lock.open_regions(push.thread);
    open_counts.push_back(static_cast<std::size_t>(open.end() - open.begin()));
    innermost_is_the_push.push_back(!open.empty() &&
                                    (open.end() - 1)->call == push.region.call);
  }

  std::vector<cunumpy::Impl::RegionPush> pushes;
  std::vector<std::size_t> open_counts;
  std::vector<bool> innermost_is_the_push;
};

TEST(RecorderRegions, ARegionInsideOneOfItsOwnNameContinuesItsCall) {
  PushSink sink;
  Kokkos::Profiling::pushRegion("step");
  Kokkos::Profiling::pushRegion("library");
  Kokkos::Profiling::pushRegion("step"); // recursive, through the library
  Kokkos::Profiling::pushRegion("step");
  for (int i = 0; i < 4; ++i)
    Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("step");
  Kokkos::Profiling::popRegion();
  const RecorderLock lock = cunumpy::Impl::lock_recorder();
  const auto& pushes = sink.pushes;
  ASSERT_EQ(pushes.size(), 5u);
  EXPECT_EQ(sink.open_counts, (std::vector<std::size_t>{1, 2, 3, 4, 1}));
  EXPECT_EQ(sink.innermost_is_the_push, std::vector<bool>(5, true));
  const auto& outer = pushes[0].region;
  EXPECT_FALSE(outer.continues);
  EXPECT_FALSE(pushes[1].region.continues);
  EXPECT_GT(pushes[1].region.call, outer.call);
  for (std::size_t i : {2u, 3u}) {
    const auto& inner = pushes[i].region;
    EXPECT_TRUE(inner.continues) << i;
    EXPECT_EQ(inner.call, outer.call) << i;
    EXPECT_NE(inner.node, outer.node) << i; // a path of its own
    EXPECT_EQ(lock.regions().node(inner.node).call_node, outer.node) << i;
  }
  EXPECT_EQ(lock.regions().node(outer.node).call_node, outer.node);
  EXPECT_FALSE(pushes[4].region.continues); // the next call
  EXPECT_GT(pushes[4].region.call, pushes[1].region.call);
  EXPECT_EQ(pushes[4].region.node, outer.node);
}

TEST(RecorderRegions, RegionsAThreadLeftOpenStayOpenAfterIt) {
  cunumpy::Impl::ensure_hooks();
  std::uint32_t index = 0;
  std::thread([&] {
    index = cunumpy::Impl::thread_index();
    Kokkos::Profiling::pushRegion("left open by its thread");
  }).join();
  Recorder& recorder = Recorder::instance();
  const RecorderLock lock = recorder.lock();
  EXPECT_TRUE(lock.open_regions(index).empty()); // no such thread now
  std::size_t found = 0;
  for (const auto& still : recorder.open_regions(lock))
    if (still.thread == index) {
      ++found;
      EXPECT_TRUE(still.ended);
      EXPECT_EQ(recorder.path(still.region.node, lock),
                "left open by its thread");
    }
  EXPECT_EQ(found, 1u);
}

TEST(RecorderKernels, KernelsAreRecordedOnlyWhileASinkWantsThem) {
  HostValues values("values", 8);
  RecordingSink sink;
  fill_values("not wanted", values, 1);
  Recorder::instance().want_kernels(true);
  fill_values("fill", values, 2);
  const double sum = sum_of("sum", values);
  Recorder::instance().want_kernels(false);
  EXPECT_EQ(sum, 56.0);
  const auto kernels = sink.kernels();
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(sink.text(kernels[0].name), "fill");
  EXPECT_EQ(sink.text(kernels[1].name), "sum");
  EXPECT_LE(kernels[0].start, kernels[0].end);
  EXPECT_LE(kernels[0].end, kernels[1].start);
  // Kernels are not transfers (Kokkos 4 may fence after a reduction).
  for (const RawEvent& event : sink.events())
    EXPECT_EQ(event.kind, EventKind::sync) << sink.text(event.label);
}

TEST(RecorderSpaces, ACopyBetweenAnUnknownSpaceAndTheHostIsCountedUncounted) {
  // A name of its own per run: the test registers it as a device.
  static int run = 0;
  const auto unknown_spaces = [] {
    return cunumpy::Impl::Recorder::instance().spaces().unknown();
  };
  const std::string name = "SyntheticUnknownSpace" + std::to_string(run++);
  const char* space = name.c_str();
  const auto named = [&](const cunumpy::Impl::SpaceRegistry::Unknown& unknown,
                         const std::string& which) {
    return std::count(unknown.names.begin(), unknown.names.end(), which);
  };
  const auto before_copies = unknown_spaces().copies;
  {
    RecordingSink sink;
    synthetic::copy(space, "Host", 64);
    synthetic::copy("Host", space, 64);
    synthetic::copy("HBW", "Host", 64); // known host spaces
    synthetic::copy("Cuda", space, 64); // a transfer
    EXPECT_EQ(sink.events().size(), 1u);
  }
  synthetic::copy(space, "Host", 64); // nobody records
  const auto unknown = unknown_spaces();
  EXPECT_EQ(unknown.copies - before_copies, 2u);
  EXPECT_EQ(named(unknown, name), 1);
  EXPECT_EQ(named(unknown, "HBW"), 0);
  // Registered as a device since: named no more, and its copies count.
  cunumpy::register_device_space(name);
  const auto after = unknown_spaces();
  EXPECT_EQ(named(after, name), 0);
  RecordingSink sink;
  synthetic::copy(space, "Host", 64);
  const auto events = sink.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::to_device);
  EXPECT_EQ(unknown_spaces().copies, after.copies);
}

} // namespace
