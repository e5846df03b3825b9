// Two recorders in one process: each is an object with its own sinks,
// threads, regions, strings, memory spaces and losses, fed through the
// functions the Kokkos Tools event path calls (record::*), as the process'
// recorder is. What one records the other never sees.

#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

#include "consumers/counter_state.hpp"
#include "cuda/cuda_view.hpp"
#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "report/format.hpp"
#include "report/report.hpp"

namespace {

using cunumpy::EventKind;
using cunumpy::Impl::CounterState;
using cunumpy::Impl::LossReason;
using cunumpy::Impl::Recorder;
using cunumpy::Impl::RecorderLock;
using cunumpy::Impl::RecorderSettings;
namespace record = cunumpy::Impl::record;

char memory[4][256];

/// A counter's state attached to `recorder`, as TransferCounter's is to the
/// process' recorder.
struct Counter {
  explicit Counter(Recorder& recorder) : state(1000), recorder(recorder) {
    state.recorder = &recorder;
    recorder.attach(&state);
  }
  ~Counter() { recorder.detach(&state); }
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  std::uint64_t count(EventKind kind) const {
    const RecorderLock lock = cunumpy::Impl::lock_recorder(recorder);
    return state.totals[cunumpy::Impl::index_of(kind)].count;
  }
  std::vector<cunumpy::Event> events() const {
    const RecorderLock lock = cunumpy::Impl::lock_recorder(recorder);
    return state.events(lock);
  }
  std::vector<std::string> problems() const {
    const RecorderLock lock = cunumpy::Impl::lock_recorder(recorder);
    return state.problems(lock);
  }

  CounterState state;
  Recorder& recorder;
};

/// A space name as Kokkos passes it: 64 readable bytes (a SpaceHandle).
struct SpaceName {
  explicit SpaceName(const char* name) {
    std::strncpy(text, name, sizeof text - 1);
  }
  char text[64] = {};
};

void copy(Recorder& recorder, const char* dst, const char* src, int index) {
  const SpaceName dst_space(dst);
  const SpaceName src_space(src);
  record::begin_deep_copy(recorder, dst_space.text, "dst", memory[index],
                          src_space.text, "src", memory[index + 1], 64);
  record::end_deep_copy(recorder);
}

TEST(TwoRecorders, WhatOneRecordsTheOtherDoesNotSee) {
  RecorderSettings with_fake_device;
  with_fake_device.device_spaces = {"FakeDevice"};
  Recorder a(with_fake_device);
  Recorder b;
  Counter in_a(a);
  Counter in_b(b);

  copy(a, "FakeDevice", "HostSpace", 0); // a device of a's only
  copy(b, "FakeDevice", "HostSpace", 0); // host to host in b
  record::push_region(b, "phase_of_b");
  copy(b, "HostSpace", "Cuda", 2);
  record::pop_region(b);
  // Another thread, which records in both, in the other order.
  std::thread([&] {
    copy(b, "Cuda", "HostSpace", 0);
    copy(a, "HostSpace", "FakeDevice", 2);
    copy(a, "HostSpace", "FakeDevice", 2);
  }).join();

  EXPECT_EQ(in_a.count(EventKind::to_device), 1u);
  EXPECT_EQ(in_a.count(EventKind::to_host), 2u);
  EXPECT_EQ(in_b.count(EventKind::to_device), 1u);
  EXPECT_EQ(in_b.count(EventKind::to_host), 1u);
  for (const cunumpy::Event& event : in_a.events())
    EXPECT_NE(event.src_space, "Cuda");
  {
    const RecorderLock lock = a.lock();
    EXPECT_EQ(a.spaces().devices(), std::vector<std::string>{"FakeDevice"});
    EXPECT_TRUE(a.spaces().unknown().names.empty());
  }
  EXPECT_TRUE(b.spaces().devices().empty());
  EXPECT_EQ(b.spaces().unknown().names, std::vector<std::string>{"FakeDevice"});
  EXPECT_EQ(b.spaces().unknown().copies, 1u);
  {
    const RecorderLock lock = lock_recorder(a);
    for (std::uint32_t node = 1; node < a.regions(lock).size(); ++node)
      EXPECT_EQ(a.path(node, lock).find("phase_of_b"), std::string::npos);
  }
  {
    const RecorderLock lock = lock_recorder(b);
    ASSERT_EQ(b.regions(lock).size(), 2u); // the root and b's phase
    EXPECT_EQ(b.path(1, lock), "phase_of_b");
  }

  // A loss in one leaves the other complete.
  a.losses().count(LossReason::record_failed);
  EXPECT_FALSE(in_a.problems().empty());
  EXPECT_TRUE(in_b.problems().empty());
}

TEST(TwoRecorders, ARecorderEndsAndAnotherRecordsOnTheSameThread) {
  Recorder survivor;
  Counter in_survivor(survivor);
  {
    // This thread records in `first` first: its first state is first's.
    Recorder first;
    Counter in_first(first);
    copy(first, "Cuda", "HostSpace", 0);
    copy(survivor, "HostSpace", "Cuda", 0);
    EXPECT_EQ(in_first.count(EventKind::to_device), 1u);
  }
  Recorder later;
  Counter in_later(later);
  copy(later, "Cuda", "HostSpace", 0);
  copy(survivor, "HostSpace", "Cuda", 0);
  EXPECT_EQ(in_later.count(EventKind::to_device), 1u);
  EXPECT_EQ(in_later.count(EventKind::to_host), 0u);
  EXPECT_EQ(in_survivor.count(EventKind::to_host), 2u);
  EXPECT_EQ(in_survivor.count(EventKind::to_device), 0u);
  EXPECT_TRUE(in_survivor.problems().empty());
}

TEST(TwoRecorders, EachReportsItsOwnRunAndDevices) {
  RecorderSettings first;
  first.run.label = "first";
  first.run.rank = 3;
  first.run.rank_known = true;
  first.device_spaces = {"FakeDevice"};
  RecorderSettings second;
  second.run.label = "second";
  Recorder a(first);
  Recorder b(second);
  cunumpy::Impl::Report of_a;
  cunumpy::Impl::Report of_b;
  cunumpy::Impl::describe_run(of_a, 0.0, lock_recorder(a));
  cunumpy::Impl::describe_run(of_b, 0.0, lock_recorder(b));
  EXPECT_EQ(of_a.label, "first");
  EXPECT_EQ(of_a.rank, 3);
  EXPECT_EQ(of_a.device_spaces, std::vector<std::string>{"FakeDevice"});
  EXPECT_EQ(of_b.label, "second");
  EXPECT_FALSE(of_b.rank_known);
  EXPECT_TRUE(of_b.device_spaces.empty());
}

TEST(TwoRecorders, EachHasItsOwnCudaView) {
  using cunumpy::Impl::cuda::CudaView;
  using cunumpy::profiling::CudaViewState;
  Recorder a;
  Recorder b;
  CudaView& of_a = CudaView::of(a);
  EXPECT_EQ(&CudaView::of(a), &of_a);
  EXPECT_NE(&CudaView::of(b), &of_a);
  of_a.set_status(CudaViewState::unavailable, "a's CUDA view only");
  EXPECT_EQ(CudaView::of(a).status().reason, "a's CUDA view only");
  EXPECT_EQ(CudaView::of(b).status().state, CudaViewState::not_started);
}

} // namespace
