// The flush thread (src/core/recorder/flush_thread.hpp): it gives queued
// records to the sinks while no one reads them, loses and repeats none
// while threads queue records as it flushes, and is one at a time.

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <stdexcept>
#include <thread>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "recorder/flush_thread.hpp"
#include "recorder/recorder.hpp"

namespace {

using cunumpy::Impl::FlushThread;
using cunumpy::Impl::RawEvent;
using cunumpy::Impl::Recorder;
using cunumpy::Impl::RecorderLock;
using cunumpy::Impl::RegionPush;

/// Counts the region pushes it is given, readable without the recorder's
/// mutex (so without flushing).
class PushCounter final : public cunumpy::Impl::EventSink {
public:
  PushCounter() {
    cunumpy::Impl::ensure_hooks();
    Recorder::instance().attach(this);
  }
  ~PushCounter() override { Recorder::instance().detach(this); }
  PushCounter(const PushCounter&) = delete;
  PushCounter& operator=(const PushCounter&) = delete;

  void on_event(const RawEvent&, const RecorderLock&) override {}
  void on_region_push(const RegionPush&, const RecorderLock&) override {
    pushes.fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<long> pushes{0};
};

FlushThread::Options fast() {
  FlushThread::Options options;
  options.min_period = 50e-6;
  options.max_period = 2e-3;
  return options;
}

TEST(FlushThread, GivesQueuedRecordsToTheSinksWithoutAReader) {
  PushCounter counter;
  FlushThread flusher(Recorder::instance(), fast());
  for (int i = 0; i < 10; ++i) {
    Kokkos::Profiling::pushRegion("flush_thread_region");
    Kokkos::Profiling::popRegion();
  }
  // Ten records are far from filling a queue: only the flush thread can
  // give them to the sink while this thread waits.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (counter.pushes.load() < 10 &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(counter.pushes.load(), 10);
  EXPECT_GE(flusher.flushes(), 1u);
  flusher.stop();
  flusher.stop(); // once is enough
}

TEST(FlushThread, ThreadsQueuingWhileItFlushesLoseNothing) {
  PushCounter counter;
  FlushThread flusher(Recorder::instance(), fast());
  constexpr int threads = 4;
  constexpr int pushes = 20000; // each thread's queue fills many times over
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([] {
      for (int i = 0; i < pushes; ++i) {
        Kokkos::Profiling::pushRegion("flush_thread_worker");
        Kokkos::Profiling::popRegion();
      }
    });
  for (std::thread& worker : workers)
    worker.join();
  flusher.stop();
  const RecorderLock lock = cunumpy::Impl::lock_recorder();
  EXPECT_EQ(counter.pushes.load(), long(threads) * pushes);
}

TEST(FlushThread, OneAtATime) {
  FlushThread first(Recorder::instance(), fast());
  EXPECT_THROW(FlushThread(Recorder::instance(), fast()), std::logic_error);
  first.stop();
  FlushThread second(Recorder::instance(), fast()); // after the first ended
  second.stop();
}

} // namespace
