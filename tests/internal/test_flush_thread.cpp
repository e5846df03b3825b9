// The flush thread (src/core/recorder/flush_thread.hpp): it gives queued
// records to the sinks while no one reads them, loses and repeats none
// while threads queue records as it flushes, and is one at a time. And the
// queues' limit (Recorder::set_queue_words, CUNUMPY_QUEUE_KIB): a thread
// gives its records to the sinks itself once it queued that much.

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

/// Pushes and pops `count` regions on the calling thread: 6 words each.
void regions(int count) {
  for (int i = 0; i < count; ++i) {
    Kokkos::Profiling::pushRegion("queue_words_region");
    Kokkos::Profiling::popRegion();
  }
}

TEST(QueueWords, ThreadsFlushOnceTheyQueuedThatMuch) {
  PushCounter counter;
  Recorder& recorder = Recorder::instance();
  { // what earlier tests queued goes first
    const RecorderLock lock = recorder.lock();
    recorder.flush(lock);
  }
  regions(50); // 300 words: far from the default's 4096
  EXPECT_EQ(counter.pushes.load(), 0);
  // This thread's queue exists already: the limit reaches it too.
  recorder.set_queue_words(128);
  EXPECT_EQ(recorder.queue_words(), 128u);
  regions(100); // 600 words: a flush about every 21 regions
  EXPECT_GE(counter.pushes.load(), 50 + 4 * 21);
  // A thread that queues its first record now.
  const long before = counter.pushes.load();
  long seen_by_the_thread = 0; // before its end, which flushes all
  std::thread([&] {
    regions(100);
    seen_by_the_thread = counter.pushes.load();
  }).join();
  EXPECT_GE(seen_by_the_thread, before + 4 * 21);
  recorder.set_queue_words(1);
  EXPECT_EQ(recorder.queue_words(), cunumpy::Impl::EventQueue::min_limit_words);
  recorder.set_queue_words(cunumpy::Impl::EventQueue::capacity_words);
  const RecorderLock lock = recorder.lock();
  recorder.flush(lock);
  EXPECT_EQ(counter.pushes.load(), 50 + 100 + 100);
}

TEST(FlushThread, OneAtATime) {
  FlushThread first(Recorder::instance(), fast());
  EXPECT_THROW(FlushThread(Recorder::instance(), fast()), std::logic_error);
  first.stop();
  FlushThread second(Recorder::instance(), fast()); // after the first ended
  second.stop();
}

} // namespace
