// The recorder's rules, driven by synthetic Kokkos Tools events
// (synthetic_events.hpp) through the entry points Kokkos itself calls: which
// copies are transfers and of which kind, which block the host, which
// fences are syncs, how nested copies, DualView syncs, regions, budgets,
// threads and call sites are recorded. These run on every Kokkos, with or
// without a device; where the rule depends on the Kokkos cunumpy was built
// against (Kokkos 3 reports no fences), the expectation says so.

#include <atomic>
#include <cstdio>
#include <fstream>
#include <gtest/gtest-spi.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cunumpy/testing/gtest.hpp>

#include "synthetic_events.hpp"
#include "test_helpers.hpp"

namespace {

namespace synthetic = cunumpy_tests::synthetic;
using cunumpy_tests::contains;
using cunumpy_tests::message_of;
using cunumpy_tests::site;
using synthetic::ExecutionSpace;
using synthetic::Fence;
using synthetic::kokkos_reports_fences;

using cunumpy::Event;
using cunumpy::EventKind;
using cunumpy::TransferError;
using cunumpy::profiling::assert_no_transfers;
using cunumpy::profiling::count_transfers;
using cunumpy::profiling::Limit;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;
using cunumpy::profiling::TransferCounter;

/// The events of `counter` of `kind`.
std::vector<Event> events_of(const TransferCounter& counter, EventKind kind) {
  std::vector<Event> result;
  for (const Event& event : counter.events())
    if (event.kind == kind)
      result.push_back(event);
  return result;
}

// Copies: kind by space names, bytes, labels.

struct SpacePair {
  const char* dst;
  const char* src;
  bool transfer;
  EventKind kind;
};

TEST(SyntheticCopies, TheKindFollowsTheNamesOfTheSpaces) {
  const SpacePair pairs[] = {
      {"Cuda", "Host", true, EventKind::to_device},
      {"Host", "Cuda", true, EventKind::to_host},
      {"Cuda", "Cuda", true, EventKind::device_copy},
      {"CudaUVM", "Host", true, EventKind::to_device},
      {"Host", "CudaUVM", true, EventKind::to_host},
      {"CudaUVM", "Cuda", true, EventKind::device_copy},
      {"CudaHostPinned", "Cuda", true, EventKind::to_host},
      {"Cuda", "CudaHostPinned", true, EventKind::to_device},
      {"HIP", "Host", true, EventKind::to_device},
      {"HIPHostPinned", "HIP", true, EventKind::to_host},
      {"SYCLDeviceUSM", "SYCLHostUSM", true, EventKind::to_device},
      {"SYCLHostUSM", "SYCLSharedUSM", true, EventKind::to_host},
      {"OpenMPTargetSpace", "Host", true, EventKind::to_device},
      {"Host", "OpenACC", true, EventKind::to_host},
      // Host to host is not a transfer, whatever the host spaces.
      {"Host", "Host", false, EventKind::to_host},
      {"CudaHostPinned", "Host", false, EventKind::to_host},
      {"HIPHostPinned", "CudaHostPinned", false, EventKind::to_host},
      {"Host", "SYCLHostUSM", false, EventKind::to_host},
      {"HBW", "Host", false, EventKind::to_host},
  };
  for (const SpacePair& pair : pairs) {
    SCOPED_TRACE(std::string(pair.dst) + " <- " + pair.src);
    auto counted = count_transfers();
    synthetic::copy(pair.dst, pair.src, 96);
    const auto& counter = counted.counter();
    if (!pair.transfer) {
      EXPECT_EQ(counter.total(), 0u);
      EXPECT_TRUE(counter.events().empty()) << counter.report();
      continue;
    }
    EXPECT_EQ(counter.total(), 1u);
    EXPECT_EQ(counter.count(pair.kind), 1u) << counter.report();
    EXPECT_EQ(counter.bytes(pair.kind), 96u);
    EXPECT_EQ(counter.syncs(), 0u);
    const auto events = counter.events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, pair.kind);
    EXPECT_EQ(events[0].dst_space, pair.dst);
    EXPECT_EQ(events[0].src_space, pair.src);
  }
}

TEST(SyntheticCopies, BytesLabelsAndDescriptionsOfRawCopies) {
  auto counted = count_transfers();
  synthetic::copy("Cuda", "Host", 800, "positions");
  synthetic::copy("Cuda", "Host", 24, "velocities");
  synthetic::copy("Host", "Cuda", 4096, "positions");
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 2u);
  EXPECT_EQ(counter.bytes_to_device(), 824u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), 4096u);
  EXPECT_EQ(counter.total(), 3u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].label, "positions");
  EXPECT_EQ(events[0].what, "deep_copy(\"positions\", nbytes=800)");
  EXPECT_EQ(events[1].label, "velocities");
  EXPECT_EQ(events[1].what, "deep_copy(\"velocities\", nbytes=24)");
  EXPECT_EQ(events[2].what, "deep_copy(\"positions\", nbytes=4096)");
  EXPECT_FALSE(events[0].implicit);
}

TEST(SyntheticCopies, AnUnknownSpaceIsTakenForTheHost) {
  // A LogicalMemorySpace or a space of one's own that no one registered:
  // taken for the host, so its copies to the host are not transfers.
  auto counted = count_transfers();
  synthetic::copy("SyntheticUnnamedSpace", "Host", 64);
  synthetic::copy("Host", "SyntheticUnnamedSpace", 64);
  EXPECT_EQ(counted.counter().total(), 0u);
  synthetic::copy("Cuda", "SyntheticUnnamedSpace", 64);
  EXPECT_EQ(counted.counter().to_device(), 1u);
}

TEST(SyntheticCopies, ARegisteredDeviceSpaceIsADevice) {
  cunumpy::register_device_space("SyntheticAccelerator");
  auto counted = count_transfers();
  synthetic::copy("SyntheticAccelerator", "Host", 64);
  synthetic::copy("Host", "SyntheticAccelerator", 32);
  synthetic::copy("SyntheticAccelerator", "Cuda", 16);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.device_copy(), 1u);
}

TEST(SyntheticCopies, AHostSpaceCannotBeRegisteredAsADevice) {
  // As a device, a host space would turn every host copy into an ignored
  // device_copy and hide it.
  for (const char* name : {"Host", "HostSpace", "CudaHostPinned",
                           "SharedHostPinned", "HIPHostPinned"}) {
    EXPECT_TRUE(contains(message_of<std::invalid_argument>(
                             [&] { cunumpy::register_device_space(name); }),
                         std::string("cunumpy::register_device_space: '") +
                             name + "' is a host memory space"))
        << name;
    EXPECT_EQ(cunumpy::space_side(name), cunumpy::SpaceSide::host) << name;
  }
  auto counted = count_transfers();
  synthetic::copy("Cuda", "Host", 64);
  synthetic::copy("HostSpace", "Cuda", 32);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().device_copy(), 0u);
}

TEST(SyntheticCopies, LongSpaceNamesAreToldApartBeyondTheirStart) {
  // The recorder compares the names of the last pair of spaces quickly;
  // names alike in their first 16 bytes must still be told apart.
  const std::string device = "SyntheticSpaceWithALongName_Device";
  const std::string other = "SyntheticSpaceWithALongName_Other";
  cunumpy::register_device_space(device);
  auto counted = count_transfers();
  synthetic::copy(device.c_str(), "Host", 8);
  synthetic::copy(other.c_str(), "Host", 8);
  synthetic::copy(device.c_str(), "Host", 8);
  synthetic::copy(other.c_str(), "Host", 8);
  EXPECT_EQ(counted.counter().to_device(), 2u);
  EXPECT_EQ(counted.counter().total(), 2u);
}

TEST(SyntheticCopies, AnEndWithoutItsBeginIsALoss) {
  // Another tool took the begin: the counter cannot be complete.
  auto counted = count_transfers();
  synthetic::end_copy();
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.total(), 0u);
  EXPECT_EQ(counter.events_lost(), 1u);
  EXPECT_FALSE(counter.complete());
  EXPECT_THROW(assert_no_transfers([] {
                 auto inner = count_transfers();
                 synthetic::end_copy();
               }),
               TransferError);
}

// Blocking: Kokkos 4 fences a blocking deep_copy inside its begin/end pair;
// Kokkos 3 reports no fences, so there every copy blocks.

TEST(SyntheticBlocking, ACopyWithAFenceInsideBlocksAndTheFenceIsNoSync) {
  auto counted = count_transfers();
  synthetic::copy("Cuda", "Host", 800, "state", Fence::inside);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.syncs(), 0u) << counter.report();
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].blocking);
  EXPECT_FALSE(events[0].async);
  EXPECT_EQ(counter.async_count(EventKind::to_device), 0u);
}

TEST(SyntheticBlocking, ACopyWithoutAFenceBlocksOnlyOnKokkos3) {
  // deep_copy(exec, dst, src): Kokkos 4 does not wait for it.
  auto counted = count_transfers();
  synthetic::copy("Host", "Cuda", 800, "state", Fence::none);
  const auto& counter = counted.counter();
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].blocking, !kokkos_reports_fences);
  EXPECT_EQ(events[0].async, kokkos_reports_fences);
  EXPECT_EQ(counter.async_count(EventKind::to_host),
            kokkos_reports_fences ? 1u : 0u);
  EXPECT_EQ(contains(counter.report(), "[async]"), kokkos_reports_fences)
      << counter.report();
}

TEST(SyntheticBlocking, AFenceOnAnotherThreadDoesNotMakeACopyBlock) {
  // In-flight copies are per thread: a fence while another thread copies is
  // that thread's sync, not part of the copy.
  auto counted = count_transfers();
  synthetic::begin_copy("Cuda", "Host", 64);
  std::thread([] { synthetic::fence("worker fence"); }).join();
  synthetic::end_copy();
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.syncs(), 1u) << counter.report();
  const auto copies = events_of(counter, EventKind::to_device);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].blocking, !kokkos_reports_fences);
}

TEST(SyntheticBlocking, AScalarReadBlocksAndIsAnImplicitSync) {
  for (Fence fence : {Fence::inside, Fence::none}) {
    SCOPED_TRACE(fence == Fence::inside ? "fenced" : "not fenced");
    auto counted = count_transfers();
    synthetic::scalar_read("Cuda", "norm", fence);
    const auto& counter = counted.counter();
    EXPECT_EQ(counter.to_host(), 1u);
    EXPECT_EQ(counter.bytes_to_host(), 8u);
    EXPECT_EQ(counter.syncs(), 1u);
    EXPECT_EQ(counter.total(), 1u); // syncs are not transfers
    const auto events = counter.events();
    ASSERT_EQ(events.size(), 2u) << counter.report();
    EXPECT_EQ(events[0].kind, EventKind::to_host);
    EXPECT_TRUE(events[0].blocking);
    EXPECT_EQ(events[0].what, "deep_copy(scalar <- \"norm\", nbytes=8)");
    EXPECT_EQ(events[1].kind, EventKind::sync);
    EXPECT_TRUE(events[1].blocking);
    EXPECT_TRUE(events[1].implicit);
    EXPECT_EQ(events[1].site.str(), events[0].site.str());
    EXPECT_TRUE(contains(counter.report(), "[implicit]"));
  }
}

TEST(SyntheticBlocking, OnlyACopyToTheHostLabelledScalarIsAScalarRead) {
  auto counted = count_transfers();
  // Into a device scalar: a to_device copy, no wait of the host.
  synthetic::begin_copy("Cuda", "Host", 8, "value", synthetic::fake_memory(0),
                        synthetic::fake_memory(1), "Scalar");
  synthetic::end_copy();
  // Into a host view of another label: a copy, no implicit sync.
  synthetic::begin_copy("Host", "Cuda", 8, "value", synthetic::fake_memory(0),
                        synthetic::fake_memory(1), "Scalars");
  synthetic::end_copy();
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.syncs(), 0u) << counter.report();
  for (const Event& event : counter.events()) {
    EXPECT_EQ(event.blocking, !kokkos_reports_fences) << event.what;
    EXPECT_EQ(event.what, "deep_copy(\"value\", nbytes=8)");
  }
}

TEST(SyntheticBlocking, CopiesInsideAnAsynchronousCunumpyCallNeverBlock) {
  cunumpy::Impl::ArrayShape shape;
  shape.rank = 1;
  shape.extents[0] = 100;
  shape.dtype = "float64";
  auto counted = count_transfers();
  {
    cunumpy::Impl::ApiScope async_call(
        "to_host_async", cunumpy::SourceLocation::current(), &shape, true);
    synthetic::copy("Host", "Cuda", 800, "state", Fence::inside);
  }
  {
    cunumpy::Impl::ApiScope blocking_call(
        "to_host", cunumpy::SourceLocation::current(), &shape);
    synthetic::copy("Host", "Cuda", 800, "state", Fence::inside);
  }
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 2u) << counted.counter().report();
  EXPECT_FALSE(events[0].blocking);
  EXPECT_TRUE(events[0].async);
  EXPECT_EQ(events[0].what, "to_host_async(shape=(100,), dtype=float64)");
  EXPECT_TRUE(events[1].blocking);
  EXPECT_EQ(events[1].what, "to_host(shape=(100,), dtype=float64)");
}

// Fences: a fence outside a copy is a sync; implicit when Kokkos made it on
// its own; a tool's fence is no sync; a global fence is one sync.

TEST(SyntheticFences, AFenceTheProgramAskedForIsAnExplicitSync) {
  for (const char* name : {"Kokkos::Cuda::fence: Unnamed Instance Fence",
                           "Kokkos::fence: Unnamed Global Fence",
                           "my solver: wait for the halo"}) {
    SCOPED_TRACE(name);
    auto counted = count_transfers();
    synthetic::fence(name);
    const auto& counter = counted.counter();
    EXPECT_EQ(counter.syncs(), 1u);
    EXPECT_EQ(counter.total(), 0u); // a sync is not a transfer
    const auto events = counter.events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, EventKind::sync);
    EXPECT_TRUE(events[0].blocking);
    EXPECT_FALSE(events[0].implicit);
    EXPECT_EQ(events[0].label, name);
    EXPECT_EQ(events[0].nbytes, 0u);
  }
}

TEST(SyntheticFences, AFenceKokkosMadeOnItsOwnIsAnImplicitSync) {
  for (const char* name :
       {"Kokkos::deep_copy: copy between contiguous views, pre view equality "
        "check",
        "Kokkos::Impl::ParallelReduce: fence after reduction",
        "HostSpace::impl_deallocate before free",
        "SharedAllocationRecord<Kokkos::CudaSpace, void>::"
        "SharedAllocationRecord(): fence after copying header from HostSpace",
        "Kokkos::Cuda: backend fence after async malloc"}) {
    SCOPED_TRACE(name);
    auto counted = count_transfers();
    synthetic::fence(name);
    const auto events = counted.counter().events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, EventKind::sync);
    EXPECT_TRUE(events[0].implicit);
  }
}

TEST(SyntheticFences, AFenceAToolAskedForIsNoSync) {
  auto counted = count_transfers();
  synthetic::fence("Kokkos::Tools::invoke_kokkosp_callback: Kokkos Profile "
                   "Tool Fence",
                   synthetic::global_id(ExecutionSpace::serial));
  synthetic::fence("Kokkos Profile Tool Fence");
  EXPECT_EQ(counted.counter().syncs(), 0u) << counted.counter().report();
}

TEST(SyntheticFences, AFenceOfAHostExecutionSpaceIsNoSync) {
  // Waiting for Serial or OpenMP is not a wait for a device, with or
  // without one. (Kokkos 3.4 reports no fences, and no execution space.)
  auto counted = count_transfers();
  synthetic::fence("Kokkos::Serial::fence: Unnamed Instance Fence",
                   synthetic::instance_id(ExecutionSpace::serial));
  synthetic::fence("Kokkos::OpenMP::fence: Unnamed Instance Fence",
                   synthetic::instance_id(ExecutionSpace::openmp));
  EXPECT_EQ(counted.counter().syncs(), kokkos_reports_fences ? 0u : 2u);
}

TEST(SyntheticFences, AGlobalFenceReportedPerExecutionSpaceIsOneSync) {
  // Kokkos 4 reports Kokkos::fence() once per execution space, in a row.
  // Kokkos 3 reports no fences: there each fence event is a sync.
  auto counted = count_transfers();
  synthetic::global_fence(
      synthetic::unnamed_global_fence,
      {ExecutionSpace::serial, ExecutionSpace::openmp, ExecutionSpace::cuda});
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.syncs(), kokkos_reports_fences ? 1u : 3u)
      << counter.report();
  for (const Event& event : counter.events())
    EXPECT_FALSE(event.implicit);
}

TEST(SyntheticFences, GlobalFencesWithSomethingBetweenAreSyncsApart) {
  auto counted = count_transfers();
  // The device's part only: a host execution space's part is dropped on a
  // build with a device.
  const auto cuda = {ExecutionSpace::cuda};
  synthetic::global_fence("first", cuda);
  synthetic::global_fence("second", cuda); // another name
  synthetic::copy("Cuda", "Host", 8);
  synthetic::global_fence("second", cuda); // after a copy
  // Fences of instances are never merged.
  synthetic::fence("instance");
  synthetic::fence("instance");
  EXPECT_EQ(counted.counter().syncs(), 5u) << counted.counter().report();
}

// Kokkos 4 reports a global fence as one part per execution space, merged
// into one sync; two Kokkos::fence() of one name in a row are still two
// syncs (a second part of one execution space starts the next fence), also
// under the plugin, which asks Kokkos for no global fencing, so that no
// tool fence comes in between.
TEST(SyntheticFences, EveryKokkosFenceIsASyncEvenBackToBack) {
  auto counted = count_transfers();
  synthetic::global_fence("twice", {ExecutionSpace::cuda});
  synthetic::global_fence("twice", {ExecutionSpace::cuda});
  EXPECT_EQ(counted.counter().syncs(), 2u) << counted.counter().report();
#if KOKKOS_VERSION >= 30500
  // The same with Kokkos' own fences (Kokkos 3.4 reports none); a build
  // without a device has only host execution spaces to wait for.
  TransferCounter real;
  {
    auto scope = count_transfers(real);
    for (int step = 0; step < 3; ++step)
      Kokkos::fence("end of step");
  }
  EXPECT_EQ(real.syncs(), cunumpy::has_device_backend ? 3u : 0u)
      << real.report();
#endif
}

TEST(SyntheticFences, FencesInsideABlockingCunumpyCallBelongToIt) {
  // Kokkos fences after a device allocation and before freeing a host
  // temporary; the blocking call waits anyway: no sync apart.
  auto counted = count_transfers();
  {
    cunumpy::Impl::ApiScope call("to_device",
                                 cunumpy::SourceLocation::current());
    synthetic::fence("Kokkos::Cuda: backend fence after async malloc");
    synthetic::copy("Cuda", "Host", 80, "x", Fence::inside);
    synthetic::fence("HostSpace::impl_deallocate before free");
  }
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.syncs(), 0u) << counter.report();
  EXPECT_EQ(counter.to_device(), 1u);
}

TEST(SyntheticFences, AFenceInsideAnAsynchronousCallIsAnImplicitSync) {
  auto counted = count_transfers();
  {
    cunumpy::Impl::ApiScope call(
        "to_host_async", cunumpy::SourceLocation::current(), nullptr, true);
    synthetic::fence("Kokkos::Cuda: backend fence after async malloc");
  }
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::sync);
  EXPECT_TRUE(events[0].implicit);
  EXPECT_EQ(events[0].what, "to_host_async()");
}

TEST(SyntheticFences, ASyncScopeIsOneSyncWithOrWithoutAFenceEvent) {
  auto counted = count_transfers();
  {
    cunumpy::Impl::SyncScope wait("synchronize",
                                  cunumpy::SourceLocation::current());
    synthetic::global_fence("cunumpy::synchronize");
  }
  {
    cunumpy::Impl::SyncScope wait("synchronize",
                                  cunumpy::SourceLocation::current());
    synthetic::fence("one instance");
    synthetic::fence("another instance");
  }
  // No fence reported (Kokkos 3): the scope records the wait itself.
  {
    cunumpy::Impl::SyncScope wait("synchronize",
                                  cunumpy::SourceLocation::current());
  }
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.syncs(), 3u) << counter.report();
  for (const Event& event : counter.events())
    EXPECT_FALSE(event.implicit);
}

// Nested copies: a deep_copy that makes inner deep copies (through a
// temporary of another layout) is recorded through its inner copies.

TEST(SyntheticNesting, ACopyMadeOfInnerCopiesIsRecordedThroughThem) {
  auto counted = count_transfers();
  synthetic::begin_copy("Cuda", "Host", 800, "strided");
  synthetic::copy("Host", "Host", 800, "pack"); // not a transfer
  synthetic::copy("Cuda", "Host", 800, "contiguous", Fence::inside);
  synthetic::end_copy();
  const auto& counter = counted.counter();
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u) << counter.report();
  EXPECT_EQ(events[0].kind, EventKind::to_device);
  EXPECT_EQ(events[0].label, "contiguous");
  EXPECT_TRUE(events[0].blocking);
  EXPECT_EQ(counter.bytes_to_device(), 800u);
}

TEST(SyntheticNesting, ACopyWhoseInnerCopiesAreNoTransfersIsRecorded) {
  auto counted = count_transfers();
  synthetic::begin_copy("Cuda", "Host", 800, "outer");
  synthetic::copy("Host", "Host", 800, "pack");
  synthetic::fence(synthetic::post_copy_fence);
  synthetic::end_copy();
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u) << counted.counter().report();
  EXPECT_EQ(events[0].label, "outer");
  EXPECT_TRUE(events[0].blocking); // its own fence
  EXPECT_EQ(counted.counter().syncs(), 0u);
}

TEST(SyntheticNesting, EveryLevelAboveARecordedCopyIsLeftOut) {
  auto counted = count_transfers();
  synthetic::begin_copy("Host", "Cuda", 64, "level 1");
  synthetic::begin_copy("Host", "Cuda", 64, "level 2");
  synthetic::copy("Host", "Cuda", 64, "level 3a");
  synthetic::copy("Host", "Cuda", 64, "level 3b");
  synthetic::end_copy();
  synthetic::end_copy();
  synthetic::copy("Host", "Cuda", 64, "after");
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 3u) << counted.counter().report();
  EXPECT_EQ(events[0].label, "level 3a");
  EXPECT_EQ(events[1].label, "level 3b");
  EXPECT_EQ(events[2].label, "after"); // the nesting ended
}

// DualView: Kokkos reports the sync after the copy it made; the copy is the
// transfer, once.

TEST(SyntheticDualView, ASyncIsCountedOnceThroughItsCopy) {
  auto counted = count_transfers();
  Kokkos::Tools::modifyDualView("dual", synthetic::fake_memory(5), false);
  synthetic::dual_view_sync("dual", 800, true);
  Kokkos::Tools::modifyDualView("dual", synthetic::fake_memory(4), true);
  synthetic::dual_view_sync("dual", 800, false, synthetic::fake_memory(5),
                            synthetic::fake_memory(4));
  // A sync with nothing to copy reports no copy, and counts nothing.
  Kokkos::Tools::syncDualView("dual", synthetic::fake_memory(4), true);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_device(), 800u);
  EXPECT_EQ(counter.total(), 2u);
  EXPECT_EQ(counter.syncs(), 0u) << counter.report();
}

// Regions and budgets: a region is a phase when a rule names it or a phase
// of its name was opened; other regions are transparent.

TEST(SyntheticRegions, ARegionIsAPhaseWhenARuleNamesIt) {
  TransferBudget budget;
  for (int i = 0; i < 2; ++i) {
    synthetic::Region integrate("integrate");
    synthetic::copy("Cuda", "Host", 8);
    synthetic::Region inner("inner");
    synthetic::copy("Cuda", "Host", 8);
  }
  budget.require("integrate", Rule().allow(EventKind::to_device));
  EXPECT_EQ(budget.calls("integrate"), 2u);
  EXPECT_EQ(budget["integrate"].to_device(), 4u); // "inner" is transparent
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  EXPECT_EQ(budget.phases(), std::vector<std::string>{"integrate"});
  budget.require("inner", Rule());
  EXPECT_EQ(budget["integrate"].to_device(), 2u);
  EXPECT_EQ(budget["inner"].to_device(), 2u);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].phase, "inner");
  EXPECT_EQ(violations[0].kind, EventKind::to_device);
}

TEST(SyntheticRegions, ARegionIsAPhaseOnceAPhaseOfItsNameWasOpened) {
  TransferBudget budget;
  { auto solve = budget.phase("solve"); }
  {
    synthetic::Region step("step");
    synthetic::copy("Cuda", "Host", 8);
    synthetic::Region solve("solve");
    synthetic::copy("Host", "Cuda", 8);
  }
  EXPECT_EQ(budget.calls("solve"), 2u);
  EXPECT_EQ(budget["solve"].to_host(), 1u);
  EXPECT_EQ(budget["solve"].to_device(), 0u);
  // "step" is no phase: its copy is outside every phase.
  EXPECT_EQ(budget.phases(), std::vector<std::string>{"solve"});
  const auto snapshot = budget.snapshot();
  EXPECT_EQ(
      snapshot.outside.totals[static_cast<std::size_t>(EventKind::to_device)]
          .count,
      1u);
  EXPECT_EQ(budget.total().total(), 2u);
}

TEST(SyntheticRegions, LibraryRegionsAreTransparentToTheCallersRule) {
  TransferBudget budget;
  budget.require("belos_solve", Rule());
  {
    synthetic::Region solve("belos_solve");
    for (const char* library :
         {"Belos: Operation Op*x", "Tpetra::CrsMatrix::apply",
          "KokkosBlas::dot[ETI]", "Teuchos::TimeMonitor"}) {
      synthetic::Region region(library);
      synthetic::copy("Host", "Cuda", 8, library);
    }
  }
  EXPECT_EQ(budget["belos_solve"].to_host(), 4u);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].phase, "belos_solve");
  EXPECT_EQ(violations[0].limit, Limit::forbidden);
  EXPECT_EQ(violations[0].actual, "4");
  EXPECT_THROW(budget.check(), TransferError);
}

// Threads and regions: a copy counts in the regions open on its own thread;
// a thread that opened none of its own counts in the region open on the
// other threads, whichever opened it; when they are in different regions,
// its phase is not known and the verdict is incomplete.

TEST(SyntheticThreads, ACopyNeverCountsInARegionOfAnotherThread) {
  // An I/O thread opens 'output' (copies allowed) while the main thread is
  // inside 'integrate' (none allowed): the main thread's copy breaks the
  // rule of 'integrate', and no thread had a path 'integrate/output'.
  TransferBudget budget;
  budget.require("integrate", Rule());
  budget.require("output", Rule().allow(EventKind::to_host));
  std::atomic<int> stage{0};
  std::thread io;
  {
    synthetic::Region integrate("integrate");
    io = std::thread([&] {
      synthetic::Region output("output");
      synthetic::copy("Host", "Cuda", 8, "snapshot");
      stage = 1;
      while (stage != 2)
        std::this_thread::yield();
    });
    while (stage != 1)
      std::this_thread::yield();
    synthetic::copy("Host", "Cuda", 8, "state");
    stage = 2;
    io.join();
  }
  EXPECT_EQ(budget["output"].to_host(), 1u) << budget.report();
  EXPECT_EQ(budget["integrate"].to_host(), 1u) << budget.report();
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].phase, "integrate");
  for (const auto& region : budget.snapshot().regions)
    EXPECT_NE(region.path, "integrate/output");
}

TEST(SyntheticThreads, AThreadWithoutRegionsCountsInTheMainThreads) {
  // A helper thread copying on behalf of the time step counts in it.
  TransferBudget budget;
  budget.require("integrate", Rule());
  {
    synthetic::Region integrate("integrate");
    std::thread helper([] { synthetic::copy("Cuda", "Host", 8, "halo"); });
    helper.join();
  }
  std::thread after([] { synthetic::copy("Cuda", "Host", 8, "halo"); });
  after.join();
  EXPECT_EQ(budget["integrate"].to_device(), 1u) << budget.report();
  EXPECT_EQ(budget.total().to_device(), 2u);
  ASSERT_EQ(budget.violations().size(), 1u) << budget.report();
}

TEST(SyntheticThreads, ACopyCountsWhereItBeganWhateverCameBeforeItsEnd) {
  // A helper's copy begins inside 'integrate'; the main thread leaves
  // 'integrate' before the copy ends (a copy whose contents advice hashes,
  // a slow one): it still counts in 'integrate'.
  TransferBudget budget;
  budget.require("integrate", Rule());
  std::atomic<int> stage{0};
  std::thread helper;
  {
    synthetic::Region integrate("integrate");
    helper = std::thread([&] {
      synthetic::begin_copy("Host", "Cuda", 8, "state");
      stage = 1;
      while (stage != 2)
        std::this_thread::yield();
      synthetic::end_copy();
    });
    while (stage != 1)
      std::this_thread::yield();
  }
  stage = 2;
  helper.join();
  EXPECT_EQ(budget["integrate"].to_host(), 1u) << budget.report();
  ASSERT_EQ(budget.violations().size(), 1u) << budget.report();
  EXPECT_EQ(budget.violations()[0].phase, "integrate");
}

TEST(SyntheticThreads, AThreadWithoutRegionsCountsInAnotherThreadsRegion) {
  // The main thread opened no region; a simulation thread is inside
  // 'solve': the main thread's copy counts there, as a pool thread's would.
  TransferBudget budget;
  budget.require("solve", Rule());
  std::atomic<int> stage{0};
  std::thread worker([&] {
    synthetic::Region solve("solve");
    stage = 1;
    while (stage != 2)
      std::this_thread::yield();
  });
  while (stage != 1)
    std::this_thread::yield();
  synthetic::copy("Cuda", "Host", 8);
  stage = 2;
  worker.join();
  synthetic::copy("Cuda", "Host", 8); // no region open anywhere
  EXPECT_EQ(budget["solve"].to_device(), 1u) << budget.report();
  EXPECT_EQ(budget.total().to_device(), 2u);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].phase, "solve");
}

TEST(SyntheticThreads, AThreadWithoutRegionsBetweenTwoRegionsIsIncomplete) {
  // Two threads in different regions: a third thread's copy belongs to one
  // of them, not known which.
  TransferBudget budget;
  budget.require("solve", Rule().allow(EventKind::to_device));
  budget.require("output", Rule().allow(EventKind::to_device));
  std::atomic<int> stage{0};
  std::thread worker([&] {
    synthetic::Region solve("solve");
    stage = 1;
    while (stage != 2)
      std::this_thread::yield();
  });
  while (stage != 1)
    std::this_thread::yield();
  {
    synthetic::Region output("output");
    std::thread pool([] { synthetic::copy("Cuda", "Host", 8); });
    pool.join();
  }
  stage = 2;
  worker.join();
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, Limit::events_lost) << budget.report();
  EXPECT_EQ(cunumpy::profiling::verdict(violations),
            cunumpy::profiling::Verdict::incomplete);
  // The report's verdict line tells it, not "0 broken rule(s)".
  EXPECT_TRUE(contains(budget.report(), "\nbudget: INCOMPLETE: events may be "
                                        "missing, so it cannot pass\n"));
}

// Unbalanced regions: a pop with no region open on its thread may have
// closed a region early and moved events out of their phase.

TEST(SyntheticRegions, APopOfARegionNoOnePushedFailsTheBudgetNamingIt) {
  TransferBudget budget;
  budget.require("integrate", Rule());
  Kokkos::Profiling::pushRegion("integrate");
  Kokkos::Profiling::pushRegion("library");
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::popRegion();              // the library's one pop too many
  synthetic::copy("Host", "Cuda", 8, "state"); // meant inside 'integrate'
  Kokkos::Profiling::popRegion(); // the program's pop: none is open
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, cunumpy::profiling::Limit::events_lost);
  ASSERT_FALSE(violations[0].details.empty());
  EXPECT_TRUE(contains(violations[0].details[0], "'integrate'"))
      << violations[0].details[0];
}

// The verdict fails only where the events a pop on an empty stack may have
// moved could change it: counted in a phase popped before them, they would
// break its rule (or, taken out of their phase, they would make its rule
// hold). Rules are given after the run, as a rule file may be.

namespace unbalanced {
void push(const char* name) {
  Kokkos::Profiling::pushRegion(name);
}
void pop() {
  Kokkos::Profiling::popRegion();
}
cunumpy::profiling::Verdict verdict(const TransferBudget& budget) {
  return cunumpy::profiling::verdict(budget.violations());
}
using cunumpy::profiling::Verdict;
} // namespace unbalanced

TEST(SyntheticRegions, APopOnAnEmptyStackWithNothingSinceMovedNothing) {
  using namespace unbalanced;
  TransferBudget budget;
  push("setup");
  synthetic::copy("Cuda", "Host", 8);
  pop();
  pop(); // a region pushed before cunumpy was loaded, or 'setup' early
  budget.require("setup", Rule().allow(EventKind::to_device));
  budget.require("solve", Rule().optional());
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
}

TEST(SyntheticRegions, APopOnAnEmptyStackAtTheStartMovesNothing) {
  using namespace unbalanced;
  TransferBudget budget;
  pop(); // before any push: pushed before cunumpy was loaded
  synthetic::copy("Cuda", "Host", 8); // outside every phase
  push("solve");
  pop();
  budget.require("solve", Rule());
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
  EXPECT_EQ(budget["solve"].total(), 0u);
  EXPECT_TRUE(budget["solve"].complete());
}

TEST(SyntheticRegions, EventsTheClosedPhaseAllowsChangeNoVerdict) {
  using namespace unbalanced;
  TransferBudget budget;
  push("setup");
  push("library");
  pop();
  pop();                              // the library's one pop too many
  synthetic::copy("Cuda", "Host", 8); // meant inside 'setup'
  pop();                              // the program's pop of 'setup'
  budget.require("setup", Rule().allow(EventKind::to_device));
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
  // Its count may be short by that copy: a view of it says so.
  EXPECT_FALSE(budget["setup"].complete());
  // A stricter rule of the phase that may have closed early fails.
  budget.require("setup", Rule());
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, Limit::events_lost);
  ASSERT_EQ(violations[0].details.size(), 1u);
  EXPECT_TRUE(contains(violations[0].details[0], "phase 'setup'") &&
              contains(violations[0].details[0], "1 to_device"))
      << violations[0].details[0];
}

TEST(SyntheticRegions, LibraryRegionsAfterTheEarlyPopDoNotHideItsEvents) {
  // Tpetra's pattern: its extra pops close 'setup' inside a call; the
  // program's later calls push and pop regions of their own before the
  // program pops 'setup'. Their copies may still belong to 'setup'.
  using namespace unbalanced;
  TransferBudget budget;
  push("setup");
  push("Tpetra::fillComplete");
  pop();
  pop(); // closes 'setup'
  pop(); // on an empty stack, inside the library
  push("Tpetra::MultiVector::putScalar");
  synthetic::copy("Cuda", "Host", 8);
  pop();
  synthetic::copy("Cuda", "Host", 8);
  push("Tpetra::MV ctor");
  pop();
  pop(); // the program's pop of 'setup'
  budget.require("setup",
                 Rule().allow(EventKind::to_device, Limits().max_count(2)));
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
  budget.require("setup",
                 Rule().allow(EventKind::to_device, Limits().max_count(1)));
  EXPECT_EQ(verdict(budget), Verdict::incomplete) << budget.report();
}

TEST(SyntheticRegions, ANestedPhaseClosedEarlyKeepsItsRule) {
  // 'step' closes early inside 'run'; the copy after it counts in 'run'
  // (no rule), and the program's pops then close 'run' and find nothing.
  using namespace unbalanced;
  TransferBudget budget;
  push("run");
  push("step");
  push("library");
  pop();
  pop(); // closes 'step'
  synthetic::copy("Cuda", "Host", 8);
  pop(); // the program's pop of 'step' closes 'run'
  pop(); // the program's pop of 'run'
  budget.require("step", Rule());
  EXPECT_EQ(verdict(budget), Verdict::incomplete) << budget.report();
  // A phase of its own at the copy's depth keeps it where it counted.
  TransferBudget other;
  push("run");
  push("step");
  pop();
  pop(); // closes 'run'
  push("output");
  synthetic::copy("Cuda", "Host", 8);
  pop();
  pop();
  other.require("run", Rule());
  other.require("step", Rule());
  other.require("output", Rule().allow(EventKind::to_device));
  EXPECT_EQ(verdict(other), Verdict::ok) << other.report();
}

TEST(SyntheticRegions, AnotherThreadsEventAfterTheEarlyPopMayBelongToIt) {
  using namespace unbalanced;
  TransferBudget budget;
  push("setup");
  pop(); // early
  std::thread helper([] { synthetic::copy("Cuda", "Host", 8); });
  helper.join();
  pop();
  budget.require("setup", Rule());
  EXPECT_EQ(verdict(budget), Verdict::incomplete) << budget.report();
}

TEST(SyntheticRegions, EventsOfSeveralEarlyPopsCountTogether) {
  // Two steps of a copy each, each closed early before one more copy: in
  // three copies of 'step', either of those fits; both together do not.
  using namespace unbalanced;
  TransferBudget budget;
  for (int i = 0; i < 2; ++i) {
    push("step");
    synthetic::copy("Cuda", "Host", 8);
    pop(); // early
    synthetic::copy("Cuda", "Host", 8);
    pop();
  }
  budget.require("step",
                 Rule().allow(EventKind::to_device, Limits().max_count(3)));
  EXPECT_EQ(verdict(budget), Verdict::incomplete) << budget.report();
  budget.require("step",
                 Rule().allow(EventKind::to_device, Limits().max_count(4)));
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
}

TEST(SyntheticRegions, EventsAfterTheLastPopOnAnEmptyStackStayWhereTheyAre) {
  using namespace unbalanced;
  TransferBudget budget;
  push("setup");
  pop();
  pop();                              // on an empty stack, nothing since
  synthetic::copy("Cuda", "Host", 8); // after it: no pop can move it
  budget.require("setup", Rule());
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
}

TEST(SyntheticRegions, EventsAcrossAPhaseBoundaryEachCountTheirOwnRule) {
  // After 'setup' closed early, an explicit phase 'output' opens and
  // closes: its copy stays in it; the copy outside both may be setup's.
  using namespace unbalanced;
  TransferBudget budget;
  push("setup");
  push("library");
  pop();
  pop(); // early
  {
    auto output = budget.phase("output");
    synthetic::copy("Host", "Cuda", 8);
  }
  synthetic::copy("Cuda", "Host", 8);
  pop();
  budget.require("setup", Rule().allow(EventKind::to_device));
  budget.require("output", Rule().allow(EventKind::to_host));
  EXPECT_EQ(verdict(budget), Verdict::ok) << budget.report();
  budget.require("setup", Rule().allow(EventKind::to_host));
  EXPECT_EQ(verdict(budget), Verdict::incomplete) << budget.report();
}

TEST(SyntheticRegions, EventsThatBreakTheirPhaseMayBelongToOneClosedEarly) {
  // 'inner' closes early inside 'outer': the copy after it breaks outer's
  // rule, which it would not if it belongs to 'inner'.
  using namespace unbalanced;
  TransferBudget budget;
  push("outer");
  push("inner");
  push("library");
  pop();
  pop(); // closes 'inner'
  synthetic::copy("Cuda", "Host", 8);
  pop(); // closes 'outer'
  pop();
  budget.require("outer", Rule());
  budget.require("inner", Rule().allow(EventKind::to_device));
  const auto violations = budget.violations();
  bool broken = false, unsure = false;
  for (const auto& violation : violations) {
    broken = broken || violation.limit == Limit::forbidden;
    unsure = unsure || (violation.limit == Limit::events_lost &&
                        contains(violation.details.at(0), "phase 'outer'"));
  }
  EXPECT_TRUE(broken && unsure) << budget.report();
}

TEST(SyntheticRegions, TooManyRegionsToTellWhereEventsBelongIsIncomplete) {
  // More distinct regions popped than the budget keeps as places its
  // events may belong to: it cannot tell, and says so.
  using namespace unbalanced;
  TransferBudget budget;
  for (int i = 0; i < 1100; ++i) {
    push(("library region " + std::to_string(i)).c_str());
    pop();
  }
  synthetic::copy("Cuda", "Host", 8);
  pop();
  budget.require("solve", Rule().optional());
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u) << budget.report();
  EXPECT_EQ(violations[0].limit, Limit::events_lost);
  EXPECT_TRUE(contains(violations[0].details.at(0), "too many"))
      << budget.report();
}

// Budget limits, with copies, scalar reads and syncs.

TEST(SyntheticBudget, MaxNbytesAndBlocking) {
  TransferBudget budget;
  auto iterate = budget.count("iterate", [](bool add_big_copy) {
    synthetic::scalar_read("Cuda", "norm"); // 8 bytes, blocking
    if (add_big_copy)
      synthetic::copy("Host", "Cuda", 800, "state", Fence::inside);
  });
  iterate(false);
  budget.require("iterate",
                 Rule().allow(EventKind::to_host, Limits().max_nbytes(8)));
  EXPECT_TRUE(budget.violations().empty()) << budget.report();

  budget.require(
      "iterate",
      Rule().allow(EventKind::to_host, Limits().max_nbytes(8).blocking(false)));
  auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].limit, Limit::blocking);

  iterate(true);
  budget.require("iterate",
                 Rule().allow(EventKind::to_host, Limits().max_nbytes(8)));
  violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].limit, Limit::max_nbytes);
  EXPECT_EQ(violations[0].actual, "800");
  ASSERT_EQ(violations[0].events.size(), 1u); // only the big copy offends
  EXPECT_EQ(violations[0].events[0].what, "deep_copy(\"state\", nbytes=800)");
}

TEST(SyntheticBudget, BlockingFalseAllowsCopiesTheHostDidNotWaitFor) {
  TransferBudget budget;
  {
    auto phase = budget.phase("overlap");
    synthetic::copy("Host", "Cuda", 64, "halo", Fence::none);
  }
  budget.require("overlap",
                 Rule().allow(EventKind::to_host, Limits().blocking(false)));
  // Kokkos 3 reports no fences: every raw copy is blocking there.
  EXPECT_EQ(budget.violations().empty(), kokkos_reports_fences)
      << budget.report();
}

TEST(SyntheticBudget, MaxCountAndMaxTotalBytes) {
  TransferBudget budget;
  for (int i = 0; i < 4; ++i) {
    auto output = budget.phase("output");
    synthetic::copy("Host", "Cuda", 8000, "state", Fence::inside);
  }
  budget.require("output",
                 Rule().allow(EventKind::to_host,
                              Limits().max_count(4).max_total_bytes(32000)));
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  budget.require("output",
                 Rule().allow(EventKind::to_host,
                              Limits().max_count(3).max_total_bytes(31999)));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].limit, Limit::max_count);
  EXPECT_EQ(violations[0].actual, "4");
  EXPECT_EQ(violations[1].limit, Limit::max_total_bytes);
  EXPECT_EQ(violations[1].actual, "32000");
}

TEST(SyntheticBudget, ImplicitFalseRejectsScalarReads) {
  TransferBudget budget;
  {
    auto phase = budget.phase("iterate");
    synthetic::scalar_read();
  }
  budget.require("iterate",
                 Rule()
                     .allow(EventKind::to_host, Limits().max_nbytes(8))
                     .allow(EventKind::sync, Limits().implicit(false))
                     .ignore({EventKind::device_copy}));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].kind, EventKind::sync);
  EXPECT_EQ(violations[0].limit, Limit::implicit);
}

TEST(SyntheticBudget, SyncLimitsCountTheWaitsOfAPhase) {
  TransferBudget budget;
  for (int step = 0; step < 3; ++step) {
    auto phase = budget.phase("step");
    synthetic::fence("halo exchange");
  }
  budget.require("step", Rule()
                             .allow(EventKind::sync, Limits().max_count(3))
                             .ignore({EventKind::device_copy}));
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  budget.require("step", Rule()
                             .allow(EventKind::sync, Limits().max_count(2))
                             .ignore({EventKind::device_copy}));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].kind, EventKind::sync);
  EXPECT_EQ(violations[0].limit, Limit::max_count);
  EXPECT_EQ(violations[0].actual, "3");
}

TEST(SyntheticBudget, DeviceCopiesAreIgnoredByDefault) {
  TransferBudget budget;
  {
    auto phase = budget.phase("p");
    synthetic::copy("Cuda", "Cuda", 80, "a", Fence::inside);
  }
  budget.require("p", Rule());
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  budget.require("p", Rule().ignore({EventKind::sync}));
  EXPECT_EQ(budget.violations().size(), 1u);
}

TEST(SyntheticBudget, ACopyInTheTimeLoopIsReportedWithItsLine) {
  TransferBudget budget(false);
  int line = 0;
  auto integrate = budget.count("integrate", [&](int step) {
    if (step == 3) {
      line = __LINE__ + 1; // the copy that sneaked in:
      CUNUMPY_SYNTHETIC_COPY_HERE("Host", "Cuda", "device", 80);
    }
  });
  budget.start();
  for (int step = 0; step < 5; ++step)
    integrate(step);
  budget.require("integrate", Rule().calls(5));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].site.str(), site(__FILE__, line));
  EXPECT_THROW(budget.check(), TransferError);
}

TEST(SyntheticBudget, ARuleFile) {
  const std::string path = ::testing::TempDir() + "synthetic_rules.toml";
  std::ofstream(path) << R"(
[phases.integrate]
calls = 2
allow.to_host = { max_nbytes = 8, blocking = true }
ignore = ["device_copy", "sync"]

[phases.output]
allow.to_host = { max_count = 10, max_total_bytes = 8000000 }
)";
  auto budget = TransferBudget::from_file(path);
  std::remove(path.c_str());
  for (int step = 0; step < 2; ++step) {
    synthetic::Region integrate("integrate");
    synthetic::scalar_read();
    synthetic::copy("Cuda", "Cuda", 800, "state", Fence::inside);
  }
  {
    synthetic::Region output("output");
    synthetic::copy("Host", "Cuda", 800, "state", Fence::inside);
  }
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  {
    synthetic::Region integrate("integrate");
    synthetic::copy("Host", "Cuda", 800, "state", Fence::inside);
  }
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 2u) << budget.report();
  EXPECT_EQ(violations[0].limit, Limit::calls);
  EXPECT_EQ(violations[0].actual, "3");
  EXPECT_EQ(violations[1].limit, Limit::max_nbytes);
  EXPECT_EQ(violations[1].actual, "800");
}

// Threads.

TEST(SyntheticThreads, CopiesOfManyThreadsAreAllCounted) {
  constexpr int threads = 4;
  constexpr int copies = 2000;
  auto counted = count_transfers();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([] {
      for (int i = 0; i < copies; ++i) {
        synthetic::copy("Cuda", "Host", 64, "x", Fence::inside);
        synthetic::fence("step");
      }
    });
  for (auto& worker : workers)
    worker.join();
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), std::uint64_t(threads * copies));
  EXPECT_EQ(counter.bytes_to_device(), std::uint64_t(threads * copies * 64));
  EXPECT_EQ(counter.syncs(), std::uint64_t(threads * copies));
  EXPECT_TRUE(counter.complete());
}

TEST(SyntheticThreads, EventsOfARunningThreadAreCountedWhenRead) {
  constexpr int copies = 10;
  auto counted = count_transfers();
  std::atomic<bool> copied{false}, release{false};
  std::thread worker([&] {
    for (int i = 0; i < copies; ++i)
      synthetic::copy("Cuda", "Host", 8);
    copied = true;
    while (!release)
      std::this_thread::yield();
  });
  while (!copied)
    std::this_thread::yield();
  EXPECT_EQ(counted.counter().to_device(), std::uint64_t(copies));
  release = true;
  worker.join();
}

TEST(SyntheticThreads, EachThreadHasItsOwnCopiesInFlight) {
  // A worker's copy begins and ends while this thread's copy is open: both
  // are recorded, neither is the other's inner copy.
  auto counted = count_transfers();
  synthetic::begin_copy("Cuda", "Host", 8, "main");
  std::thread([] { synthetic::copy("Host", "Cuda", 16, "worker"); }).join();
  synthetic::end_copy();
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NE(events[0].thread, events[1].thread);
}

// Call sites: a raw copy or fence is attributed to the line that made it.

TEST(SyntheticSites, ARawCopyAndAFenceNameTheirLine) {
  auto counted = count_transfers();
  const int copy_line = __LINE__ + 1;
  CUNUMPY_SYNTHETIC_COPY_HERE("Cuda", "Host", "src", 64);
  const int fence_line = __LINE__ + 1;
  CUNUMPY_SYNTHETIC_FENCE_HERE("wait");
  const int scalar_line = __LINE__ + 1;
  CUNUMPY_SYNTHETIC_SCALAR_READ_HERE("Cuda", "norm");
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 4u) << counted.counter().report();
  EXPECT_EQ(events[0].site.str(), site(__FILE__, copy_line));
  EXPECT_EQ(events[1].site.str(), site(__FILE__, fence_line));
  EXPECT_EQ(events[2].site.str(), site(__FILE__, scalar_line));
  EXPECT_EQ(events[3].kind, EventKind::sync); // the scalar read's wait
  EXPECT_EQ(events[3].site.str(), site(__FILE__, scalar_line));
}

TEST(SyntheticSites, ACopyInAThreadsLambdaNamesTheLambdasLine) {
  auto counted = count_transfers();
  int copy_line = 0;
  std::thread([&copy_line] {
    copy_line = __LINE__ + 1;
    CUNUMPY_SYNTHETIC_COPY_HERE("Cuda", "Host", "src", 64);
  }).join();
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u) << counted.counter().report();
  EXPECT_EQ(events[0].site.str(), site(__FILE__, copy_line));
}

TEST(SyntheticSites, CallSiteCaptureCanBeTurnedOff) {
  const int saved = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(0);
  auto counted = count_transfers();
  synthetic::copy("Cuda", "Host", 8);
  {
    // cunumpy's own calls know their caller without a stack.
    cunumpy::Impl::ApiScope call("to_device",
                                 cunumpy::SourceLocation::current());
    synthetic::copy("Cuda", "Host", 8);
  }
  cunumpy::profiling::set_backtrace_depth(saved);
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_FALSE(events[0].site.known());
  EXPECT_EQ(events[0].site.str(), "<unknown>");
  EXPECT_TRUE(events[1].site.known());
  EXPECT_TRUE(contains(events[1].site.str(), "test_events.cpp:"));
}

TEST(SyntheticSites, TheReportListsEachKindAndCallSite) {
  cunumpy::Impl::ArrayShape shape;
  shape.rank = 1;
  shape.extents[0] = 100000;
  shape.dtype = "float64";
  auto counted = count_transfers();
  int up_line = 0, down_line = 0;
  for (int step = 0; step < 10; ++step) {
    // What cunumpy::to_device and to_host do: a call scope at the
    // caller's line around the copy.
    {
      const auto where = cunumpy::SourceLocation::current();
      up_line = where.line;
      cunumpy::Impl::ApiScope up("to_device", where, &shape);
      synthetic::copy("Cuda", "Host", 800000, "h", Fence::inside);
    }
    {
      const auto where = cunumpy::SourceLocation::current();
      down_line = where.line;
      cunumpy::Impl::ApiScope down("to_host", where, &shape);
      synthetic::copy("Host", "Cuda", 800000, "d", Fence::inside);
    }
  }
  const std::string expected =
      "20 transfer(s) through cunumpy (10 to_host, 10 to_device, 0 "
      "kernel_conversion, 0 fallback, 0 device_copy)\n"
      "  to_host (10):\n"
      "    " +
      site(__FILE__, down_line) +
      ": to_host(shape=(100000,), dtype=float64) (x10)\n"
      "  to_device (10):\n"
      "    " +
      site(__FILE__, up_line) +
      ": to_device(shape=(100000,), dtype=float64) (x10)\n";
  EXPECT_EQ(counted.counter().report(), expected);
}

// count_transfers and assert_no_transfers.

TEST(SyntheticScopes, ScopesNestAndAccumulate) {
  TransferCounter accumulated;
  for (int call = 0; call < 3; ++call) {
    auto outer = count_transfers(accumulated);
    auto inner = count_transfers();
    synthetic::copy("Cuda", "Host", 8);
    EXPECT_EQ(inner.counter().to_device(), 1u);
  }
  EXPECT_EQ(accumulated.to_device(), 3u);
  {
    // Attaching a counter twice counts once.
    auto a = count_transfers(accumulated);
    auto b = count_transfers(accumulated);
    synthetic::copy("Cuda", "Host", 8);
  }
  EXPECT_EQ(accumulated.to_device(), 4u);
  synthetic::copy("Cuda", "Host", 8); // after its scopes
  EXPECT_EQ(accumulated.to_device(), 4u);
}

TEST(SyntheticScopes, AScopeSeesOnlyEventsMadeWhileItIsOpen) {
  auto outer = count_transfers();
  synthetic::copy("Cuda", "Host", 8);
  TransferCounter inner_counter;
  {
    auto inner = count_transfers(inner_counter);
    EXPECT_EQ(inner.counter().to_device(), 0u);
    synthetic::copy("Cuda", "Host", 8);
  }
  synthetic::copy("Cuda", "Host", 8);
  EXPECT_EQ(inner_counter.to_device(), 1u);
  EXPECT_EQ(outer.counter().to_device(), 3u);
}

TEST(SyntheticScopes, StopEndsCountingEarly) {
  auto counted = count_transfers();
  synthetic::copy("Cuda", "Host", 8);
  counted.stop();
  synthetic::copy("Cuda", "Host", 8);
  EXPECT_EQ(counted.counter().to_device(), 1u);
}

TEST(SyntheticScopes, EventsWithoutACounterAreNotRecorded) {
  synthetic::copy("Cuda", "Host", 8);
  synthetic::fence("nobody counts");
  auto counted = count_transfers();
  EXPECT_EQ(counted.counter().to_device(), 0u);
  EXPECT_EQ(counted.counter().syncs(), 0u);
}

TEST(SyntheticScopes, RawEventsAreBoundedCountsStayExact) {
  TransferCounter counter(100);
  {
    auto counted = count_transfers(counter);
    for (int i = 0; i < 5000; ++i)
      synthetic::copy("Cuda", "Host", 8);
  }
  EXPECT_EQ(counter.to_device(), 5000u);
  EXPECT_EQ(counter.events().size(), 100u);
  EXPECT_EQ(counter.events_dropped(), 4900u);
  ASSERT_EQ(counter.sites().size(), 1u);
  EXPECT_EQ(counter.sites()[0].count, 5000u);
  counter.clear();
  EXPECT_EQ(counter.total(), 0u);
  EXPECT_TRUE(counter.events().empty());
}

TEST(SyntheticScopes, RawEventsKeptAreTheLastInTheirOrderAfterTheRingTurns) {
  // 3 kept of 3, 4, ..., 11: the ring turns more than twice.
  for (int copies = 3; copies <= 11; ++copies) {
    TransferCounter counter(3);
    {
      auto counted = count_transfers(counter);
      for (int i = 1; i <= copies; ++i)
        synthetic::copy("Cuda", "Host", 8 * i);
    }
    const auto events = counter.events();
    ASSERT_EQ(events.size(), 3u) << copies << " copies";
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(events[k].nbytes, std::uint64_t(8 * (copies - 2 + k)))
          << copies << " copies, event " << k;
    EXPECT_EQ(counter.events_dropped(), std::uint64_t(copies - 3));
  }
}

TEST(SyntheticScopes, AssertNoTransfersAllowsDeviceCopiesAndSyncs) {
  const int result = assert_no_transfers([] {
    synthetic::copy("Cuda", "Cuda", 80);
    synthetic::fence("wait");
    return 7;
  });
  EXPECT_EQ(result, 7);
}

TEST(SyntheticScopes, AssertNoTransfersThrowsWithTheReportNamingTheLine) {
  int line = 0;
  const std::string message = message_of<TransferError>([&] {
    assert_no_transfers([&] {
      line = __LINE__ + 1;
      CUNUMPY_SYNTHETIC_COPY_HERE("Cuda", "Host", "h", 80);
    });
  });
  EXPECT_TRUE(contains(message, "1 transfer(s) through cunumpy"));
  EXPECT_TRUE(contains(message, "to_device (1)"));
  EXPECT_TRUE(contains(message, site(__FILE__, line)));
}

TEST(SyntheticScopes, AssertNoTransfersLetsExceptionsOfTheCallablePass) {
  EXPECT_THROW(assert_no_transfers([] {
                 synthetic::copy("Cuda", "Cuda", 8);
                 throw std::logic_error("from the callable");
               }),
               std::logic_error);
}

TEST(SyntheticScopes, GoogleTestMacros) {
  EXPECT_NO_TRANSFERS(synthetic::copy("Cuda", "Cuda", 8));
  ASSERT_NO_TRANSFERS(synthetic::fence("wait"));
  EXPECT_NONFATAL_FAILURE(
      EXPECT_NO_TRANSFERS(synthetic::copy("Cuda", "Host", 8)), "to_device (1)");
  EXPECT_NONFATAL_FAILURE(EXPECT_NO_TRANSFERS(synthetic::scalar_read()),
                          "to_host (1)");
}

// Kernels are not transfers.

// Fills values with 0, 1, ... and returns their sum, in two kernels. A free
// function: nvcc rejects a Kokkos lambda in a GoogleTest body (a private
// member).
double fill_and_sum(const Kokkos::View<double*, Kokkos::HostSpace>& values) {
  const auto policy = Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(
      0, values.extent(0));
  Kokkos::parallel_for(
      "fill", policy, KOKKOS_LAMBDA(int i) { values(i) = i; });
  double sum = 0;
  Kokkos::parallel_reduce(
      "sum", policy,
      KOKKOS_LAMBDA(int i, double& partial) { partial += values(i); }, sum);
  return sum;
}

TEST(SyntheticKernels, AKernelIsNotATransfer) {
  Kokkos::View<double*, Kokkos::HostSpace> values("values", 16);
  auto counted = count_transfers();
  const double sum = fill_and_sum(values);
  EXPECT_EQ(sum, 120.0);
  EXPECT_EQ(counted.counter().total(), 0u) << counted.counter().report();
}

} // namespace
