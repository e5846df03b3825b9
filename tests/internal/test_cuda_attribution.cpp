// CUDA's own record of the process, without CUDA: the attribution unit fed
// synthetic CUPTI records (src/core/cuda/attribution.hpp), the timeline a
// budget places late events with, and the whole path through the recorder:
// synthetic Kokkos Tools events (tests/cpp/synthetic_events.hpp) with
// synthetic CUPTI calls and records inside them, through the CUDA view the
// collector feeds.

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "cuda/attribution.hpp"
#include "cuda/cuda_view.hpp"
#include "recorder/recorder.hpp"
#include "recorder/region_timeline.hpp"
#include "synthetic_events.hpp"

namespace {

/// Whether a report shows `text`, with the report when it does not.
::testing::AssertionResult shows(const std::string& report,
                                 const std::string& text) {
  if (report.find(text) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no \"" << text << "\" in\n"
                                       << report;
}

namespace synthetic = cunumpy_tests::synthetic;
using cunumpy::EventKind;
using cunumpy::MemoryKind;
using cunumpy::Impl::kokkos_source;
using cunumpy::Impl::RawEvent;
using cunumpy::Impl::RegionTimeline;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;
using namespace cunumpy::Impl::cuda;

/// Interns into a map of its own, for the unit alone.
struct Names {
  std::map<std::string, std::uint32_t, std::less<>> ids;
  std::vector<std::string> texts{""};
  Attribution::Intern intern() {
    return [this](std::string_view text) {
      auto found = ids.find(text);
      if (found != ids.end())
        return found->second;
      const auto id = static_cast<std::uint32_t>(texts.size());
      texts.emplace_back(text);
      ids.emplace(std::string(text), id);
      return id;
    };
  }
  std::string text(std::uint32_t id) const { return texts.at(id); }
};

/// The unit's id of CUDA's record among the recorder's sources: any but
/// kokkos_source.
constexpr std::uint8_t cuda_origin = 5;

RawEvent copy_event(EventKind kind, std::uint64_t nbytes, double start) {
  RawEvent event;
  event.kind = kind;
  event.nbytes = nbytes;
  event.start = start;
  event.duration = 1e-5;
  event.origin = cuda_origin;
  return event;
}

CopyRecord record(std::uint32_t correlation, CopyDirection direction,
                  MemoryKind src, MemoryKind dst, std::uint64_t bytes,
                  std::uint64_t start_ns, std::uint64_t end_ns) {
  CopyRecord result;
  result.correlation = correlation;
  result.direction = direction;
  result.src = src;
  result.dst = dst;
  result.bytes = bytes;
  result.start_ns = start_ns;
  result.end_ns = end_ns;
  return result;
}

// ------------------------------------------------------ the unit, alone

TEST(CudaAttribution, ACopyWaitsForItsRecordAndTakesItsMemoryKindsAndTime) {
  Attribution unit(cuda_origin);
  Names names;
  const std::uint32_t token = unit.open(1.0, 1.0);
  unit.expect(token, 7);
  unit.hold(token, copy_event(EventKind::to_device, 800, 1.0), nullptr,
            CopyDirection::host_to_device);
  std::vector<RawEvent> out;
  unit.release(1.1, false, names.intern(), out);
  EXPECT_TRUE(out.empty()); // its record has not come
  EXPECT_EQ(unit.oldest_pending(5.0), 1.0);
  unit.on_copy(record(7, CopyDirection::host_to_device, MemoryKind::pageable,
                      MemoryKind::device, 800, 1'000'000'000, 1'000'250'000));
  unit.release(1.2, false, names.intern(), out);
  ASSERT_EQ(out.size(), 1u);
  const RawEvent& event = out[0];
  EXPECT_EQ(event.kind, EventKind::to_device);
  EXPECT_EQ(event.nbytes, 800u);
  EXPECT_TRUE(event.late);
  EXPECT_EQ(event.origin, cuda_origin);
  EXPECT_EQ(event.src_memory(), MemoryKind::pageable);
  EXPECT_EQ(event.dst_memory(), MemoryKind::device);
  EXPECT_NEAR(event.device_seconds(), 250e-6, 250e-6 * 4e-3);
  EXPECT_EQ(names.text(event.src_space), "Host");
  EXPECT_EQ(names.text(event.dst_space), "Cuda");
  EXPECT_EQ(unit.pending(), 0u);
  EXPECT_EQ(unit.stats().described, 1u);
  EXPECT_EQ(unit.oldest_pending(5.0), 5.0);
}

TEST(CudaAttribution, ARecordOfTheDriverCallDescribesTheRuntimeCallOnce) {
  Attribution unit(cuda_origin);
  Names names;
  const std::uint32_t token = unit.open(0.0, 0.0);
  unit.expect(token, 10); // cudaMemcpy
  unit.alias(token, 11);  // the cuMemcpyHtoD inside it
  unit.hold(token, copy_event(EventKind::to_device, 64, 0.0), nullptr,
            CopyDirection::host_to_device);
  CopyRecord driver = record(11, CopyDirection::host_to_device,
                             MemoryKind::pinned, MemoryKind::device, 64, 5, 9);
  driver.runtime_correlation = 10;
  unit.on_copy(driver);
  std::vector<RawEvent> out;
  unit.release(0.0, false, names.intern(), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].src_memory(), MemoryKind::pinned);
  EXPECT_EQ(names.text(out[0].src_space), "CudaHostPinned");
  // The same record again finds no event waiting: it came too late.
  unit.on_copy(driver);
  EXPECT_EQ(unit.stats().too_late, 1u);
  unit.on_copy(record(999, CopyDirection::host_to_device, MemoryKind::pinned,
                      MemoryKind::device, 64, 5, 9));
  EXPECT_EQ(unit.stats().unmatched, 1u);
}

TEST(CudaAttribution, AKokkosCopyKeepsItsKindAndSpacesAndIsNotACudaEvent) {
  Attribution unit(cuda_origin);
  Names names;
  const std::uint32_t token = unit.open(2.0, 2.5);
  unit.expect(token, 20);
  RawEvent kokkos;
  kokkos.kind = EventKind::to_host;
  kokkos.nbytes = 4096;
  kokkos.src_space = names.intern()("Cuda");
  kokkos.dst_space = names.intern()("Host");
  kokkos.start = 2.0;
  unit.hold(token, kokkos, nullptr, CopyDirection::unknown);
  unit.on_copy(record(20, CopyDirection::device_to_host, MemoryKind::device,
                      MemoryKind::pinned, 4096, 0, 1000));
  std::vector<RawEvent> out;
  unit.release(2.6, false, names.intern(), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, EventKind::to_host);
  EXPECT_EQ(out[0].origin, kokkos_source);
  EXPECT_TRUE(out[0].late);
  EXPECT_EQ(out[0].dst_memory(), MemoryKind::pinned);
  EXPECT_EQ(names.text(out[0].src_space), "Cuda"); // Kokkos' names stay
  EXPECT_EQ(out[0].start, 2.0);
}

TEST(CudaAttribution, TheRecordTellsTheDirectionTheCallDidNot) {
  Attribution unit(cuda_origin);
  Names names;
  const std::uint32_t known = unit.open(0.0, 0.0);
  unit.expect(known, 30);
  unit.hold(known, copy_event(EventKind::to_device, 0, 0.0), nullptr,
            CopyDirection::unknown);
  unit.on_copy(record(30, CopyDirection::device_to_host, MemoryKind::device,
                      MemoryKind::pageable, 512, 0, 10));
  const std::uint32_t unknown = unit.open(0.0, 0.0);
  unit.expect(unknown, 31);
  unit.hold(unknown, copy_event(EventKind::to_device, 8, 0.0), nullptr,
            CopyDirection::unknown);
  const std::uint32_t host = unit.open(0.0, 0.0);
  unit.expect(host, 32);
  unit.hold(host, copy_event(EventKind::to_device, 8, 0.0), nullptr,
            CopyDirection::unknown);
  unit.on_copy(record(32, CopyDirection::host_to_host, MemoryKind::pageable,
                      MemoryKind::pinned, 8, 0, 10));
  std::vector<RawEvent> out;
  unit.release(0.0, true, names.intern(), out);
  // The first is a to_host of the record's bytes; the second's direction
  // nobody told (counted as lost by the CUDA view); the third was host to
  // host, not a transfer.
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, EventKind::to_host);
  EXPECT_EQ(out[0].nbytes, 512u);
  EXPECT_EQ(unit.stats().unknown_direction, 1u);
  EXPECT_EQ(unit.stats().without_record, 1u);
}

TEST(CudaAttribution, EventsGoOnWithoutTheirRecordAtAReadOrAfterWaiting) {
  Attribution unit(cuda_origin);
  Names names;
  const std::uint32_t token = unit.open(0.0, 0.0);
  unit.expect(token, 40);
  unit.hold(token, copy_event(EventKind::to_host, 8, 0.0), nullptr,
            CopyDirection::device_to_host);
  std::vector<RawEvent> out;
  unit.release(Attribution::max_wait / 2, false, names.intern(), out);
  EXPECT_TRUE(out.empty());
  unit.release(Attribution::max_wait * 2, false, names.intern(), out);
  ASSERT_EQ(out.size(), 1u); // waited long enough
  EXPECT_EQ(out[0].src_memory(), MemoryKind::unknown);
  EXPECT_EQ(out[0].device_seconds(), 0.0);
  EXPECT_TRUE(out[0].late);
  // A call open (not returned yet) stays, even for a read.
  const std::uint32_t open = unit.open(3.0, 3.0);
  unit.expect(open, 41);
  out.clear();
  unit.release(3.0, true, names.intern(), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(unit.oldest_pending(4.0), 3.0);
  unit.cancel(open);
  EXPECT_EQ(unit.pending(), 0u);
}

TEST(CudaAttribution, ASynchronousCopyGoesOnWithItsImplicitWait) {
  Attribution unit(cuda_origin);
  Names names;
  const std::uint32_t token = unit.open(0.0, 0.0);
  unit.expect(token, 50);
  RawEvent copy = copy_event(EventKind::to_host, 8, 0.5);
  RawEvent wait = copy;
  wait.kind = EventKind::sync;
  wait.nbytes = 0;
  wait.implicit = true;
  unit.hold(token, copy, &wait, CopyDirection::device_to_host);
  unit.on_copy(record(50, CopyDirection::device_to_host, MemoryKind::device,
                      MemoryKind::pageable, 8, 0, 1));
  std::vector<RawEvent> out;
  unit.release(0.0, false, names.intern(), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, EventKind::to_host);
  EXPECT_EQ(out[1].kind, EventKind::sync);
  EXPECT_TRUE(out[1].implicit);
  EXPECT_TRUE(out[1].late);
  EXPECT_EQ(out[1].origin, cuda_origin);
}

TEST(CudaAttribution, UnifiedMemoryRecordsAreMigrationsAtTheirTime) {
  Attribution unit(cuda_origin);
  Names names;
  // CUDA's clock 1 s ahead of the recorder's.
  unit.set_time_mapping({2'000'000'000, 1.0});
  unit.on_unified_memory({UnifiedMemoryCounter::bytes_to_host,
                          MigrationCause::eviction, 65536, 2'500'000'000,
                          2'500'100'000});
  unit.on_unified_memory({UnifiedMemoryCounter::bytes_to_device,
                          MigrationCause::coherence, 4096, 2'100'000'000,
                          2'100'010'000});
  unit.on_unified_memory({UnifiedMemoryCounter::gpu_page_fault,
                          MigrationCause::unknown, 3, 2'200'000'000, 0});
  std::vector<RawEvent> out;
  unit.release(0.0, false, names.intern(), out);
  ASSERT_EQ(out.size(), 3u);
  // Oldest first, on the recorder's clock.
  EXPECT_NEAR(out[0].start, 1.1, 1e-9);
  EXPECT_NEAR(out[1].start, 1.2, 1e-9);
  EXPECT_NEAR(out[2].start, 1.5, 1e-9);
  EXPECT_EQ(out[0].kind, EventKind::migration);
  EXPECT_EQ(out[0].nbytes, 4096u);
  EXPECT_EQ(names.text(out[0].description),
            "unified memory host to device (page fault)");
  EXPECT_EQ(names.text(out[0].src_space), "Host");
  EXPECT_EQ(names.text(out[0].dst_space), "CudaUVM");
  EXPECT_EQ(out[1].nbytes, 0u); // a fault moves no bytes itself
  EXPECT_EQ(names.text(out[1].description), "unified memory GPU page fault");
  EXPECT_EQ(out[2].nbytes, 65536u);
  EXPECT_EQ(names.text(out[2].description),
            "unified memory device to host (eviction)");
  EXPECT_NEAR(out[2].duration, 100e-6, 1e-12);
  for (const RawEvent& event : out) {
    EXPECT_TRUE(event.late);
    EXPECT_EQ(event.origin, cuda_origin);
    EXPECT_EQ(event.thread, device_thread);
    EXPECT_FALSE(event.blocking);
  }
  EXPECT_EQ(unit.stats().migration_records, 3u);
  EXPECT_EQ(unit.stats().migrated_bytes, 69632u);
}

TEST(CudaAttribution, MigrationDescriptionsNameTheDirectionAndTheCause) {
  EXPECT_EQ(migration_description(UnifiedMemoryCounter::bytes_to_device,
                                  MigrationCause::user),
            "unified memory host to device (prefetch requested)");
  EXPECT_EQ(migration_description(UnifiedMemoryCounter::bytes_to_host,
                                  MigrationCause::coherence),
            "unified memory device to host (page fault)");
  EXPECT_EQ(migration_description(UnifiedMemoryCounter::bytes_to_host,
                                  MigrationCause::prefetch),
            "unified memory device to host (driver prefetch)");
  EXPECT_EQ(migration_description(UnifiedMemoryCounter::thrashing,
                                  MigrationCause::unknown),
            "unified memory thrashing");
  EXPECT_EQ(migration_description(UnifiedMemoryCounter::cpu_page_fault,
                                  MigrationCause::unknown),
            "unified memory CPU page fault");
  EXPECT_EQ(space_name(MemoryKind::managed), "CudaUVM");
  EXPECT_EQ(space_name(MemoryKind::unknown), "");
}

TEST(RegionTimeline, GivesTheStateAtATimeAndForgetsBeforeTheHorizon) {
  RegionTimeline timeline({0, 0, 0});
  timeline.record(1.0, {3, 0, 1});
  timeline.record(2.0, {0, 0, 0});
  timeline.record(3.0, {5, 1, 2});
  RegionTimeline::State state;
  ASSERT_TRUE(timeline.at(0.5, state));
  EXPECT_EQ(state.node, 0u);
  ASSERT_TRUE(timeline.at(1.5, state));
  EXPECT_EQ(state.node, 3u);
  ASSERT_TRUE(timeline.at(2.0, state)); // a change holds from its time
  EXPECT_EQ(state.node, 0u);
  ASSERT_TRUE(timeline.at(9.0, state));
  EXPECT_EQ(state.node, 5u);
  EXPECT_EQ(state.thread, 1u);
  EXPECT_EQ(state.call, 2u);
  timeline.forget_before(2.5); // keeps the change in force at 2.5
  EXPECT_EQ(timeline.size(), 2u);
  EXPECT_FALSE(timeline.at(1.5, state));
  ASSERT_TRUE(timeline.at(2.6, state));
  EXPECT_EQ(state.node, 0u);
  timeline.record(2.9, {7, 0, 3}); // a time going back holds from the last
  ASSERT_TRUE(timeline.at(3.0, state));
  EXPECT_EQ(state.node, 7u);
}

// ----------------------------------------- through the recorder and sinks

/// Correlation ids of the synthetic calls, far from those a real CUDA run
/// of this test program gives.
std::uint32_t next_correlation() {
  static std::uint32_t next = 0xC0000000u;
  return next++;
}

ApiCall api_call(const char* name, CallFamily family, CopyDirection direction,
                 std::uint64_t bytes, bool synchronous) {
  ApiCall call;
  call.name = name;
  call.family = family;
  call.direction = direction;
  call.bytes = bytes;
  call.synchronous = synchronous;
  call.correlation = next_correlation();
  return call;
}

/// The recorder's time in CUDA's nanoseconds (CUPTI stamps its records
/// with the recorder's clock).
std::uint64_t ns_now(double offset = 0.0) {
  return static_cast<std::uint64_t>(
      (cunumpy::Impl::Recorder::instance().now() + offset) * 1e9);
}

CudaView& view() {
  CudaView& instance = CudaView::of(cunumpy::Impl::Recorder::instance());
  instance.set_time_mapping(TimeMapping{});
  return instance;
}

TEST(CudaRecords, ACudaCopyInsideAKokkosDeepCopyIsTheSameEventEnriched) {
  cunumpy::Impl::ensure_hooks();
  auto counted = cunumpy::profiling::count_transfers();
  const ApiCall call = api_call("cudaMemcpyAsync", CallFamily::copy,
                                CopyDirection::host_to_device, 800, false);
  synthetic::begin_copy("Cuda", "Host", 800, "state");
  view().api_enter(call);
  const std::uint64_t start = ns_now();
  view().api_exit(call.correlation);
  synthetic::end_copy();
  CopyRecord copy = record(call.correlation, CopyDirection::host_to_device,
                           MemoryKind::pinned, MemoryKind::device, 800, start,
                           start + 40'000);
  view().copy_records(&copy, 1);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.bytes_to_device(), 800u);
  EXPECT_EQ(counter.syncs(), 0u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].source, "kokkos");
  EXPECT_EQ(events[0].src_memory, MemoryKind::pinned);
  EXPECT_EQ(events[0].dst_memory, MemoryKind::device);
  EXPECT_NEAR(events[0].device_duration, 40e-6, 40e-6 * 4e-3);
  EXPECT_EQ(events[0].src_space, "Host"); // Kokkos' spaces
  EXPECT_EQ(events[0].what, "deep_copy(\"state\", nbytes=800)");
  const auto sites = counter.sites();
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].src_memory, MemoryKind::pinned);
  EXPECT_NEAR(sites[0].device_seconds, 40e-6, 40e-6 * 4e-3);
  EXPECT_EQ(counter.report().find("[cuda]"), std::string::npos);
}

TEST(CudaRecords, AKokkosCopyWhoseRecordIsLateIsCountedAtTheRead) {
  auto counted = cunumpy::profiling::count_transfers();
  const ApiCall call = api_call("cudaMemcpyAsync", CallFamily::copy,
                                CopyDirection::device_to_host, 64, false);
  const auto late_before = cunumpy::profiling::cuda_view().too_late;
  synthetic::begin_copy("Host", "Cuda", 64, "norm");
  view().api_enter(call);
  view().api_exit(call.correlation);
  synthetic::end_copy();
  // No record yet: the read gives the event as it is, once.
  EXPECT_EQ(counted.counter().to_host(), 1u);
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].src_memory, MemoryKind::unknown);
  const CopyRecord copy =
      record(call.correlation, CopyDirection::device_to_host,
             MemoryKind::device, MemoryKind::pageable, 64, 1, 2);
  view().copy_records(&copy, 1);
  EXPECT_EQ(counted.counter().to_host(), 1u); // not a second event
  EXPECT_EQ(cunumpy::profiling::cuda_view().too_late, late_before + 1);
}

/// A raw CUDA call made at the line of the macro (its call site).
#define CUNUMPY_TEST_CUDA_CALL_HERE(call)                                      \
  do {                                                                         \
    view().api_enter(call);                                                    \
    view().api_exit((call).correlation);                                       \
  } while (false)

TEST(CudaRecords, ACudaCopyOutsideKokkosIsACudaEventAtItsCallSite) {
  cunumpy::Impl::ensure_hooks();
  auto counted = cunumpy::profiling::count_transfers();
  const ApiCall call = api_call("cudaMemcpy", CallFamily::copy,
                                CopyDirection::device_to_host, 4096, true);
  const int line = __LINE__ + 1;
  CUNUMPY_TEST_CUDA_CALL_HERE(call);
  const std::uint64_t start = ns_now();
  const CopyRecord copy = record(
      call.correlation, CopyDirection::device_to_host, MemoryKind::device,
      MemoryKind::pageable, 4096, start, start + 2000);
  view().copy_records(&copy, 1);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), 4096u);
  // A synchronous copy makes the host wait: an implicit sync.
  EXPECT_EQ(counter.syncs(), 1u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::to_host);
  EXPECT_EQ(events[0].source, "cuda");
  EXPECT_EQ(events[0].what, "cudaMemcpy(nbytes=4096)");
  EXPECT_EQ(events[0].src_space, "Cuda");
  EXPECT_EQ(events[0].dst_space, "Host");
  EXPECT_EQ(events[0].dst_memory, MemoryKind::pageable);
  EXPECT_TRUE(events[0].blocking);
  EXPECT_EQ(events[0].site.line, line);
  EXPECT_NE(events[0].site.file.find("test_cuda_attribution.cpp"),
            std::string::npos)
      << events[0].site.str();
  EXPECT_EQ(events[1].kind, EventKind::sync);
  EXPECT_TRUE(events[1].implicit);
  EXPECT_EQ(events[1].source, "cuda");
  const std::string report = counter.report();
  EXPECT_TRUE(shows(report, "cudaMemcpy(nbytes=4096) (x1) [cuda]"));
  EXPECT_TRUE(shows(report, "cudaMemcpy(nbytes=4096) (x1) [implicit] [cuda]"));
}

TEST(CudaRecords, AsyncCopiesWaitsAndPrefetchesOfCuda) {
  cunumpy::Impl::ensure_hooks();
  auto counted = cunumpy::profiling::count_transfers();
  const ApiCall async = api_call("cudaMemcpyAsync", CallFamily::copy,
                                 CopyDirection::host_to_device, 16, false);
  CUNUMPY_TEST_CUDA_CALL_HERE(async);
  const ApiCall wait = api_call("cudaDeviceSynchronize", CallFamily::wait,
                                CopyDirection::unknown, 0, true);
  CUNUMPY_TEST_CUDA_CALL_HERE(wait);
  const ApiCall prefetch =
      api_call("cudaMemPrefetchAsync", CallFamily::prefetch,
               CopyDirection::host_to_device, 1 << 20, false);
  CUNUMPY_TEST_CUDA_CALL_HERE(prefetch);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.async_count(EventKind::to_device), 1u);
  EXPECT_EQ(counter.syncs(), 1u); // the wait; an async copy makes none
  EXPECT_EQ(counter.migrations(), 1u);
  EXPECT_EQ(counter.bytes_migrated(), 0u); // the records count the bytes
  const std::string report = counter.report();
  EXPECT_TRUE(shows(report, "cudaDeviceSynchronize() (x1) [cuda]"));
  EXPECT_TRUE(shows(report, "cudaMemPrefetchAsync(nbytes=1048576, to device) "
                            "(x1) [cuda]"));
  EXPECT_TRUE(shows(report, "cudaMemcpyAsync(nbytes=16) (x1) [async] [cuda]"));
}

TEST(CudaRecords, WaitsInsideKokkosFencesAndCopiesAreKokkosEvents) {
  cunumpy::Impl::ensure_hooks();
  auto counted = cunumpy::profiling::count_transfers();
  std::uint64_t handle = 0;
  Kokkos::Tools::beginFence(
      "Kokkos::fence: Unnamed Global Fence",
      synthetic::global_id(synthetic::ExecutionSpace::cuda), &handle);
  const ApiCall wait = api_call("cudaDeviceSynchronize", CallFamily::wait,
                                CopyDirection::unknown, 0, true);
  CUNUMPY_TEST_CUDA_CALL_HERE(wait);
  Kokkos::Tools::endFence(handle);
  synthetic::begin_copy("Cuda", "Host", 8);
  const ApiCall in_copy = api_call("cudaStreamSynchronize", CallFamily::wait,
                                   CopyDirection::unknown, 0, true);
  CUNUMPY_TEST_CUDA_CALL_HERE(in_copy);
  synthetic::end_copy();
  const auto& counter = counted.counter();
  // The fence is the sync, not the CUDA wait inside it; the copy's wait is
  // part of the copy.
  EXPECT_EQ(counter.syncs(), 1u);
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.report().find("[cuda]"), std::string::npos)
      << counter.report();
}

TEST(CudaRecords, CallsWhileNothingCountsAreNotEvents) {
  const auto before = cunumpy::profiling::cuda_view();
  const ApiCall call = api_call("cudaMemcpy", CallFamily::copy,
                                CopyDirection::host_to_device, 8, true);
  CUNUMPY_TEST_CUDA_CALL_HERE(call);
  const CopyRecord copy =
      record(call.correlation, CopyDirection::host_to_device,
             MemoryKind::pageable, MemoryKind::device, 8, 1, 2);
  view().copy_records(&copy, 1);
  auto counted = cunumpy::profiling::count_transfers();
  EXPECT_EQ(counted.counter().total(), 0u);
  const auto after = cunumpy::profiling::cuda_view();
  EXPECT_EQ(after.unmatched, before.unmatched + 1);
}

TEST(CudaRecords, MigrationsCountInThePhaseOpenAtTheirTime) {
  view().unified_memory_records(nullptr, 0); // CUDA's record is on
  TransferBudget budget;
  budget.require("step", Rule());
  budget.require("output", Rule().allow(EventKind::migration,
                                        Limits().max_total_bytes(1 << 20)));
  double step_start = 0.0;
  double step_end = 0.0;
  {
    synthetic::Region step("step");
    step_start = cunumpy::Impl::Recorder::instance().now();
    synthetic::Region solve("solve"); // a library's region inside
    step_end = cunumpy::Impl::Recorder::instance().now();
  }
  { synthetic::Region output("output"); }
  // The records come after both regions ended: one from inside 'step', one
  // after it.
  const auto ns = [](double seconds) {
    return static_cast<std::uint64_t>(seconds * 1e9);
  };
  const UnifiedMemoryRecord records[] = {
      {UnifiedMemoryCounter::bytes_to_host, MigrationCause::eviction, 65536,
       ns((step_start + step_end) / 2), ns((step_start + step_end) / 2) + 10},
      {UnifiedMemoryCounter::bytes_to_device, MigrationCause::coherence, 4096,
       ns_now(), ns_now() + 10},
  };
  view().unified_memory_records(records, 2);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].phase, "step");
  EXPECT_EQ(violations[0].kind, EventKind::migration);
  EXPECT_EQ(violations[0].limit, cunumpy::profiling::Limit::forbidden);
  EXPECT_EQ(violations[0].actual, "1");
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].nbytes, 65536u);
  EXPECT_EQ(budget["step"].bytes_migrated(), 65536u);
  EXPECT_EQ(budget["output"].bytes_migrated(), 0u);
  EXPECT_EQ(budget.total().bytes_migrated(), 65536u + 4096u);
  const std::string report = budget.report();
  EXPECT_TRUE(shows(report, "unified memory device to host (eviction) (x1), "
                            "65536 bytes [cuda]"));
}

// Until CUDA's record begins, the recorder keeps only the main thread's
// last change of region: a migration from after that change, reported
// once the record runs, still counts in the region open then.
TEST(CudaRecords, AMigrationCountsInTheRegionOpenBeforeCudasRecordBegan) {
  TransferBudget budget;
  budget.require("step", Rule());
  double inside = 0.0;
  {
    synthetic::Region step("step");
    inside = cunumpy::Impl::Recorder::instance().now();
    view().unified_memory_records(nullptr, 0); // CUDA's record begins here
  }
  const auto at = static_cast<std::uint64_t>(inside * 1e9);
  const UnifiedMemoryRecord records[] = {{UnifiedMemoryCounter::bytes_to_host,
                                          MigrationCause::eviction, 65536, at,
                                          at + 10}};
  view().unified_memory_records(records, 1);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].phase, "step");
  EXPECT_EQ(violations[0].kind, EventKind::migration);
  EXPECT_EQ(budget["step"].bytes_migrated(), 65536u);
}

TEST(CudaRecords, MigrationRulesFromARuleFileCheckTheirBytes) {
  view().unified_memory_records(nullptr, 0); // CUDA's record is on
  TransferBudget budget;
  budget.require_toml(R"(
[phases.step]
allow.migration = { max_total_bytes = 8192 }
)",
                      "rules.toml");
  double inside = 0.0;
  {
    synthetic::Region step("step");
    inside = cunumpy::Impl::Recorder::instance().now();
  }
  const auto at = static_cast<std::uint64_t>(inside * 1e9);
  const UnifiedMemoryRecord records[] = {
      {UnifiedMemoryCounter::bytes_to_device, MigrationCause::coherence, 8192,
       at, at + 1},
      {UnifiedMemoryCounter::bytes_to_host, MigrationCause::coherence, 4096, at,
       at + 1},
  };
  view().unified_memory_records(records, 2);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, cunumpy::profiling::Limit::max_total_bytes);
  EXPECT_EQ(violations[0].allowed, "8192");
  EXPECT_EQ(violations[0].actual, "12288");
}

TEST(CudaRecords, ABudgetForbidsCudaCopiesLikeAnyOther) {
  cunumpy::Impl::ensure_hooks();
  TransferBudget budget;
  budget.require("step", Rule());
  {
    synthetic::Region step("step");
    const ApiCall call = api_call("cudaMemcpy", CallFamily::copy,
                                  CopyDirection::device_to_host, 8, true);
    CUNUMPY_TEST_CUDA_CALL_HERE(call);
  }
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].kind, EventKind::to_host);
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].source, "cuda");
  EXPECT_NE(violations[0].str().find("[cuda]"), std::string::npos)
      << violations[0].str();
}

TEST(CudaRecords, AssertNoTransfersCatchesMigrations) {
  const auto at = ns_now();
  EXPECT_THROW(cunumpy::profiling::assert_no_transfers([&] {
                 const UnifiedMemoryRecord migration{
                     UnifiedMemoryCounter::bytes_to_device,
                     MigrationCause::coherence, 4096, at + 1, at + 2};
                 view().unified_memory_records(&migration, 1);
               }),
               cunumpy::TransferError);
}

TEST(CudaRecords, ALateRecordOfAForgottenRegionMakesTheBudgetIncomplete) {
  TransferBudget budget;
  budget.require("step", Rule().optional());
  const double before = cunumpy::Impl::Recorder::instance().now();
  // Regions until the budget has forgotten what was open before: a read
  // tells it that no record older than the read is still to come.
  (void)budget.violations();
  for (int i = 0; i < 400; ++i)
    synthetic::Region step("step");
  (void)budget.violations();
  for (int i = 0; i < 400; ++i)
    synthetic::Region step("step");
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  const auto at = static_cast<std::uint64_t>(before * 1e9);
  const UnifiedMemoryRecord migration{UnifiedMemoryCounter::bytes_to_device,
                                      MigrationCause::coherence, 64, at,
                                      at + 1};
  view().unified_memory_records(&migration, 1);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, cunumpy::profiling::Limit::events_lost);
  ASSERT_EQ(violations[0].details.size(), 1u);
  EXPECT_NE(violations[0].details[0].find("came later than cunumpy remembers"),
            std::string::npos);
}

// ------------------------------------------- Kokkos' own CUDA traffic
// The sequences Kokkos 4.6 made on an H200, among its Kokkos Tools events:
// the lock arrays' pointers copied at the first launch of a translation
// unit, the header of a device allocation, a reduction's result.

/// A kernel launch (a begin/end pair of parallel_for) on an execution space
/// of `space`, with `calls` inside.
void launch(const char* name, std::initializer_list<ApiCall> calls,
            synthetic::ExecutionSpace space = synthetic::ExecutionSpace::cuda) {
  std::uint64_t id = 0;
  Kokkos::Tools::beginParallelFor(name, synthetic::instance_id(space), &id);
  for (const ApiCall& call : calls)
    CUNUMPY_TEST_CUDA_CALL_HERE(call);
  Kokkos::Tools::endParallelFor(id);
}

/// A view of `bytes` in CudaSpace as Kokkos makes it: the allocation, the
/// copy of its header (the CUDA copy `header`), the fence after it, and
/// the initialization kernel.
void allocate_view(const char* label, std::uint64_t bytes, ApiCall header) {
  static char memory[256];
  Kokkos::Tools::allocateData(Kokkos::Profiling::make_space_handle("Cuda"),
                              label, memory, bytes);
  header.dst = memory;
  CUNUMPY_TEST_CUDA_CALL_HERE(header);
  synthetic::fence("SharedAllocationRecord<Kokkos::CudaSpace, void>::"
                   "SharedAllocationRecord(): fence after copying header "
                   "from HostSpace");
  launch(
      ("Kokkos::View::initialization [" + std::string(label) + "] via memset")
          .c_str(),
      {});
}

/// CUDA's record feeds the recorder from its start on, as when the
/// collector starts: one call while nothing counts.
void start_cuda_record() {
  cunumpy::Impl::ensure_hooks();
  const ApiCall call = api_call("cudaDeviceSynchronize", CallFamily::wait,
                                CopyDirection::unknown, 0, true);
  CUNUMPY_TEST_CUDA_CALL_HERE(call);
}

ApiCall lock_array_copy() {
  return api_call("cudaMemcpyToSymbol", CallFamily::copy,
                  CopyDirection::host_to_device, 8, true);
}

/// Kokkos' copy of a view's header to the start of its allocation.
ApiCall header_copy(const void* allocation = nullptr) {
  ApiCall call = api_call("cudaMemcpyAsync", CallFamily::copy,
                          CopyDirection::host_to_device, 128, false);
  call.dst = allocation;
  return call;
}

TEST(KokkosOwn, CopiesToTheDeviceOfADeviceLaunchAreKokkosOwnItsResultIsNot) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  const ApiCall first = lock_array_copy(), second = lock_array_copy();
  const ApiCall result = api_call("cudaMemcpyAsync", CallFamily::copy,
                                  CopyDirection::device_to_host, 8, false);
  const ApiCall wait = api_call("cudaEventSynchronize", CallFamily::wait,
                                CopyDirection::unknown, 0, true);
  launch("advance", {first, second, result, wait});
  const std::uint64_t start = ns_now();
  const CopyRecord record_of_first =
      record(first.correlation, CopyDirection::host_to_device,
             MemoryKind::pageable, MemoryKind::device, 8, start, start + 1000);
  view().copy_records(&record_of_first, 1);
  const auto& counter = counted.counter();
  // The result copied back is the program's read (a reduction into a host
  // value); the lock arrays are Kokkos'.
  EXPECT_EQ(counter.total(), 1u) << counter.report();
  EXPECT_EQ(counter.to_device(), 0u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), 8u);
  EXPECT_EQ(counter.syncs(), 0u); // the launch's own wait is Kokkos'
  EXPECT_EQ(counter.count(EventKind::kokkos_own), 2u);
  EXPECT_EQ(counter.bytes(EventKind::kokkos_own), 16u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, EventKind::kokkos_own);
  EXPECT_EQ(events[0].source, "cuda");
  EXPECT_EQ(events[0].what, "cudaMemcpyToSymbol(nbytes=8)");
  EXPECT_EQ(events[0].dst_memory, MemoryKind::device); // CUDA's record
  EXPECT_NE(events[0].site.file.find("test_cuda_attribution.cpp"),
            std::string::npos)
      << events[0].site.str();
  EXPECT_NE(events[0].site.line, 0);
  const std::string report = counter.report();
  EXPECT_TRUE(shows(report, "1 transfer(s) through cunumpy")) << report;
  EXPECT_TRUE(shows(report, "Kokkos' own CUDA copies 2 (16 bytes")) << report;
  EXPECT_TRUE(shows(report, "kokkos_own (2):")) << report;
  EXPECT_NO_THROW(cunumpy::profiling::assert_no_transfers(
      [] { launch("advance", {lock_array_copy()}); }));
}

TEST(KokkosOwn, TheHeaderOfADeviceAllocationIsKokkosOwnAndOnlyThatCopy) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  allocate_view("state", 800, header_copy());
  // The program's own copy right after: a transfer.
  const ApiCall mine = api_call("cudaMemcpyAsync", CallFamily::copy,
                                CopyDirection::host_to_device, 128, false);
  CUNUMPY_TEST_CUDA_CALL_HERE(mine);
  // Two copies after an allocation: the first is the header, the second
  // the program's.
  Kokkos::Tools::allocateData(Kokkos::Profiling::make_space_handle("Cuda"),
                              "raw", synthetic::fake_memory(3), 64);
  const ApiCall header = header_copy(synthetic::fake_memory(3)),
                second = header_copy(synthetic::fake_memory(3));
  CUNUMPY_TEST_CUDA_CALL_HERE(header);
  CUNUMPY_TEST_CUDA_CALL_HERE(second);
  // A host allocation opens no window.
  Kokkos::Tools::allocateData(Kokkos::Profiling::make_space_handle("Host"),
                              "host", synthetic::fake_memory(4), 64);
  const ApiCall after_host = header_copy();
  CUNUMPY_TEST_CUDA_CALL_HERE(after_host);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.count(EventKind::kokkos_own), 2u) << counter.report();
  EXPECT_EQ(counter.to_device(), 3u) << counter.report();
}

TEST(KokkosOwn, ABudgetThatForbidsCopiesPassesOnKokkosOwnUnlessARuleLimitsIt) {
  start_cuda_record();
  TransferBudget budget;
  budget.require("integrate", Rule());
  budget.require("setup",
                 Rule()
                     .allow(EventKind::to_device, {})
                     .allow(EventKind::kokkos_own,
                            cunumpy::profiling::Limits().max_count(1)));
  {
    synthetic::Region setup("setup");
    allocate_view("state", 800, header_copy());
    allocate_view("rhs", 800, header_copy());
  }
  for (int step = 0; step < 3; ++step) {
    synthetic::Region integrate("integrate");
    launch("advance", {lock_array_copy(), lock_array_copy()});
  }
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].phase, "setup");
  EXPECT_EQ(violations[0].kind, EventKind::kokkos_own);
  EXPECT_EQ(violations[0].limit, cunumpy::profiling::Limit::max_count);
}

TEST(KokkosOwn, ACopyAfterTheAllocationWindowClosedIsTheProgramsOwn) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  Kokkos::Tools::allocateData(Kokkos::Profiling::make_space_handle("Cuda"),
                              "uvm", synthetic::fake_memory(5), 64);
  synthetic::fence("the program's fence"); // no header copy came: closed
  const ApiCall mine = header_copy();
  CUNUMPY_TEST_CUDA_CALL_HERE(mine);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().count(EventKind::kokkos_own), 0u);
}

TEST(KokkosOwn, OnlyAHeaderSizedCopyToTheAllocationIsItsHeader) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  const auto cuda = Kokkos::Profiling::make_space_handle("Cuda");
  // A raw allocation (Kokkos::CudaSpace().allocate), then the program's
  // 32 KiB into it.
  Kokkos::Tools::allocateData(cuda, "staging", synthetic::fake_memory(5),
                              32768);
  ApiCall staging = api_call("cudaMemcpy", CallFamily::copy,
                             CopyDirection::host_to_device, 32768, true);
  staging.dst = synthetic::fake_memory(5);
  CUNUMPY_TEST_CUDA_CALL_HERE(staging);
  // A header's size, to another address than the allocation's.
  Kokkos::Tools::allocateData(cuda, "state", synthetic::fake_memory(6), 800);
  const ApiCall elsewhere = header_copy(synthetic::fake_memory(7));
  CUNUMPY_TEST_CUDA_CALL_HERE(elsewhere);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.count(EventKind::kokkos_own), 0u) << counter.report();
  EXPECT_EQ(counter.to_device(), 2u) << counter.report();
  EXPECT_EQ(counter.bytes_to_device(), 32768u + 128u);
}

TEST(KokkosOwn, NothingAHostKernelsFunctorDoesIsKokkosOwn) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  // A host parallel_for whose functor calls CUDA: a cuBLAS-like copy and
  // a wait, as Kokkos' own launch would make them.
  launch("host work",
         {lock_array_copy(), api_call("cudaStreamSynchronize", CallFamily::wait,
                                      CopyDirection::unknown, 0, true)},
         synthetic::ExecutionSpace::openmp);
  launch("serial work", {header_copy()}, synthetic::ExecutionSpace::serial);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.count(EventKind::kokkos_own), 0u) << counter.report();
  EXPECT_EQ(counter.to_device(), 2u) << counter.report();
  // The program's wait, and that of its synchronous copy.
  EXPECT_EQ(counter.syncs(), 2u) << counter.report();
}

TEST(KokkosOwn, AKernelWhoseEndNeverCameLeavesNoWindowOpen) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  std::uint64_t id = 0;
  // A host kernel whose functor threw: no end. The program's copies after
  // it are its own.
  Kokkos::Tools::beginParallelFor(
      "host work", synthetic::instance_id(synthetic::ExecutionSpace::openmp),
      &id);
  const ApiCall after_host = lock_array_copy();
  CUNUMPY_TEST_CUDA_CALL_HERE(after_host);
  // A device kernel whose launch threw: a plain cudaMemcpy is never one of
  // Kokkos' launch copies, and the thread's next region closes the launch.
  Kokkos::Tools::beginParallelFor(
      "device work", synthetic::instance_id(synthetic::ExecutionSpace::cuda),
      &id);
  const ApiCall plain = api_call("cudaMemcpy", CallFamily::copy,
                                 CopyDirection::host_to_device, 64, true);
  CUNUMPY_TEST_CUDA_CALL_HERE(plain);
  { synthetic::Region next("next"); }
  const ApiCall after_region = lock_array_copy();
  CUNUMPY_TEST_CUDA_CALL_HERE(after_region);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.count(EventKind::kokkos_own), 0u) << counter.report();
  EXPECT_EQ(counter.to_device(), 3u) << counter.report();
}

/// A parallel_reduce into a host value on `space` as Kokkos 4.6 makes it:
/// the launch (with `calls` inside, and the fence before the host reads the
/// result from pinned memory when `pinned`), then the fence after it.
void reduce(synthetic::ExecutionSpace space, bool pinned,
            std::initializer_list<ApiCall> calls = {}) {
  std::uint64_t id = 0;
  Kokkos::Tools::beginParallelReduce("residual", synthetic::instance_id(space),
                                     &id);
  for (const ApiCall& call : calls)
    CUNUMPY_TEST_CUDA_CALL_HERE(call);
  if (pinned)
    synthetic::fence("Kokkos::Impl::ParallelReduce<Cuda, RangePolicy>::"
                     "execute: Result Not Device Accessible",
                     synthetic::instance_id(space));
  Kokkos::Tools::endParallelReduce(id);
  synthetic::fence(
      "Kokkos::parallel_reduce: fence due to result being value, not view",
      synthetic::instance_id(space));
}

TEST(KokkosOwn, AReductionIntoAHostValueIsTheProgramsRead) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  reduce(synthetic::ExecutionSpace::cuda, true); // Kokkos 4 on CUDA
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_host(), 1u) << counter.report();
  const auto events = counter.events();
  const auto read = std::find_if(events.begin(), events.end(), [](auto& e) {
    return e.kind == EventKind::to_host;
  });
  ASSERT_NE(read, events.end());
  EXPECT_EQ(read->what, "parallel_reduce(\"residual\") result to the host, "
                        "size not reported by Kokkos");
  EXPECT_EQ(read->src_space, "Cuda");
  EXPECT_NE(read->site.file.find("synthetic_events.hpp"), std::string::npos)
      << read->site.str(); // the line that fenced: synthetic::fence
  // Copied back by CUDA: one read, of its bytes, not a second one at the
  // fence after the kernel.
  reduce(synthetic::ExecutionSpace::cuda, false,
         {api_call("cudaMemcpyAsync", CallFamily::copy,
                   CopyDirection::device_to_host, 8, false)});
  EXPECT_EQ(counter.to_host(), 2u) << counter.report();
  EXPECT_EQ(counter.bytes_to_host(), 8u) << counter.report();
  // HIP: only the fence after the kernel shows it.
  reduce(synthetic::ExecutionSpace::hip, false);
  EXPECT_EQ(counter.to_host(), 3u) << counter.report();
  // A host reduction reads no device.
  reduce(synthetic::ExecutionSpace::serial, false);
  reduce(synthetic::ExecutionSpace::openmp, false);
  EXPECT_EQ(counter.to_host(), 3u) << counter.report();
  EXPECT_THROW(cunumpy::profiling::assert_no_transfers(
                   [] { reduce(synthetic::ExecutionSpace::cuda, true); }),
               cunumpy::TransferError);
}

TEST(KokkosOwn, ARuleAllowingSmallReadsPassesAReductionEveryStep) {
  start_cuda_record();
  TransferBudget budget;
  budget.require("step",
                 Rule().allow(EventKind::to_host,
                              cunumpy::profiling::Limits().max_nbytes(8)));
  TransferBudget forbidding;
  forbidding.require("step", Rule());
  for (int step = 0; step < 3; ++step) {
    synthetic::Region region("step");
    reduce(synthetic::ExecutionSpace::cuda, true);
  }
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  const auto violations = forbidding.violations();
  ASSERT_EQ(violations.size(), 1u) << forbidding.report();
  EXPECT_EQ(violations[0].kind, EventKind::to_host);
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].count, 3u);
}

TEST(CudaRecords, MigrationRulesAreNotCheckedWhereCudaRecordsNoMigration) {
  start_cuda_record();
  using cunumpy::profiling::CudaViewState;
  using cunumpy::profiling::Limit;
  const auto before = cunumpy::profiling::cuda_view();
  CudaView& cuda = view();
  cuda.set_status(CudaViewState::on, "");
  cuda.note_managed_memory();
  const auto verdict_of = [](const Rule& rule) {
    TransferBudget budget;
    budget.require("step", rule);
    { synthetic::Region step("step"); }
    const auto violations = budget.violations();
    for (const auto& violation : violations)
      if (violation.limit == Limit::migrations_unseen)
        return cunumpy::profiling::verdict(violations);
    return cunumpy::profiling::Verdict::ok;
  };
  // CUDA refused its unified-memory counters.
  cuda.set_unified_memory(false,
                          "CUDA does not give unified-memory counters "
                          "here (CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED)");
  EXPECT_EQ(verdict_of(Rule()), cunumpy::profiling::Verdict::unchecked);
  EXPECT_NE(cunumpy::profiling::cuda_view().migrations_unseen.find(
                "UM_PROFILING_NOT_SUPPORTED"),
            std::string::npos);
  EXPECT_NE(cunumpy::profiling::cuda_view_line(cunumpy::profiling::cuda_view())
                .find("migrations not seen"),
            std::string::npos);
  // A rule that ignores migrations checks nothing CUDA could not see.
  EXPECT_EQ(verdict_of(Rule().ignore({EventKind::migration, EventKind::sync,
                                      EventKind::device_copy})),
            cunumpy::profiling::Verdict::ok);
  // Counters on, yet not one record of the managed memory's faults.
  cuda.set_unified_memory(true, "");
  if (before.migration_records == 0) {
    EXPECT_EQ(verdict_of(Rule()), cunumpy::profiling::Verdict::unchecked);
  }
  const UnifiedMemoryRecord fault{UnifiedMemoryCounter::gpu_page_fault,
                                  MigrationCause::unknown, 1, ns_now(),
                                  ns_now()};
  cuda.unified_memory_records(&fault, 1);
  EXPECT_EQ(cunumpy::profiling::cuda_view().migrations_unseen, "");
  cuda.set_status(before.state, before.reason);
}

} // namespace

TEST(KokkosOwn, AnotherThreadsLaunchOpensNoWindowForThisThread) {
  start_cuda_record();
  auto counted = cunumpy::profiling::count_transfers();
  // One thread is inside a device kernel's launch (its begin came, not its
  // end); the program copies on another thread meanwhile, in Kokkos' way.
  std::uint64_t id = 0;
  Kokkos::Tools::beginParallelFor(
      "device work", synthetic::instance_id(synthetic::ExecutionSpace::cuda),
      &id);
  std::thread other([] {
    const ApiCall copy = lock_array_copy();
    CUNUMPY_TEST_CUDA_CALL_HERE(copy);
    std::uint64_t result = 0;
    Kokkos::Tools::beginParallelReduce(
        "host sum", synthetic::instance_id(synthetic::ExecutionSpace::openmp),
        &result);
    Kokkos::Tools::endParallelReduce(result);
    // The first thread's reduction is not this thread's.
    synthetic::fence(
        "Kokkos::parallel_reduce: fence due to result being value, not view",
        synthetic::instance_id(synthetic::ExecutionSpace::cuda));
  });
  other.join();
  Kokkos::Tools::endParallelFor(id);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.count(EventKind::kokkos_own), 0u) << counter.report();
  EXPECT_EQ(counter.to_device(), 1u) << counter.report();
  EXPECT_EQ(counter.to_host(), 0u) << counter.report();
}
