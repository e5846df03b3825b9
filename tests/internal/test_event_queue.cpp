// A thread's event queue stores each record in its own size, wraps at the
// end of its buffer without splitting a record, gives the records back in
// the order they were pushed with their flags, and says when it is full.

#include <cstdint>
#include <gtest/gtest.h>
#include <memory>
#include <variant>

#include "recorder/event_queue.hpp"
#include "recorder/lock.hpp"

namespace {

using cunumpy::Impl::EventQueue;
using cunumpy::Impl::PendingRecord;
using cunumpy::Impl::RawEvent;
using cunumpy::Impl::RecorderLock;
using cunumpy::Impl::RecorderMutex;
using cunumpy::Impl::RegionPop;
using cunumpy::Impl::RegionPush;

using cunumpy::Impl::Allocation;

/// The record pushed `n`th: a copy, a push, a pop or an allocation in turn
/// (10, 3, 3 and 5 words: 21 words, which do not divide the buffer), each
/// telling its number, and the flags it was pushed with.
bool push_nth(EventQueue& queue, std::uint32_t n) {
  switch (n % 4) {
  case 0: {
    RawEvent event;
    event.nbytes = n;
    event.site = n;
    event.scalar = n % 2 == 0;
    return queue.push(event, event.scalar ? EventQueue::followed_by_wait : 0);
  }
  case 1:
    return queue.push(RegionPush{n, 7, double(n)});
  case 2:
    return queue.push(RegionPop{n, double(n)});
  default:
    return queue.push(Allocation{nullptr, n, 3, true, double(n)});
  }
}

std::uint64_t words_of_nth(std::uint32_t n) {
  switch (n % 4) {
  case 0:
    return EventQueue::words_of<RawEvent>();
  case 1:
    return EventQueue::words_of<RegionPush>();
  case 2:
    return EventQueue::words_of<RegionPop>();
  default:
    return EventQueue::words_of<Allocation>();
  }
}

void expect_nth(const PendingRecord& record, std::uint8_t flags,
                std::uint32_t n) {
  switch (n % 4) {
  case 0: {
    const auto* event = std::get_if<RawEvent>(&record);
    ASSERT_NE(event, nullptr) << "record " << n;
    EXPECT_EQ(event->nbytes, n);
    EXPECT_EQ(event->site, n);
    EXPECT_EQ(flags, n % 2 == 0 ? EventQueue::followed_by_wait : 0);
    break;
  }
  case 1: {
    const auto* push = std::get_if<RegionPush>(&record);
    ASSERT_NE(push, nullptr) << "record " << n;
    EXPECT_EQ(push->name, n);
    EXPECT_EQ(push->thread, 7u);
    EXPECT_EQ(push->time, double(n));
    EXPECT_EQ(flags, 0);
    break;
  }
  case 2: {
    const auto* pop = std::get_if<RegionPop>(&record);
    ASSERT_NE(pop, nullptr) << "record " << n;
    EXPECT_EQ(pop->thread, n);
    EXPECT_EQ(pop->time, double(n));
    EXPECT_EQ(flags, 0);
    break;
  }
  default: {
    const auto* allocation = std::get_if<Allocation>(&record);
    ASSERT_NE(allocation, nullptr) << "record " << n;
    EXPECT_EQ(allocation->nbytes, n);
    EXPECT_EQ(allocation->thread, 3u);
    EXPECT_TRUE(allocation->freed);
    EXPECT_EQ(flags, 0);
  }
  }
}

/// The record at `position`, and its flags.
PendingRecord read_one(const EventQueue& queue, std::uint64_t& position,
                       std::uint8_t& flags, const RecorderLock& lock) {
  PendingRecord read;
  queue.read(position, lock, [&](const auto& record, std::uint8_t its_flags) {
    read = record;
    flags = its_flags;
  });
  return read;
}

TEST(EventQueue, RecordsTakeTheirOwnSize) {
  EXPECT_EQ(EventQueue::words_of<RegionPush>(), 3u); // 24 bytes
  EXPECT_EQ(EventQueue::words_of<RegionPop>(), 3u);
  EXPECT_EQ(EventQueue::words_of<RawEvent>(), 10u); // 80 bytes
  EXPECT_EQ(EventQueue::words_of<Allocation>(), 5u);
}

TEST(EventQueue, FillsToItsCapacityAndWrapsWithoutLosingARecord) {
  RecorderMutex mutex;
  const RecorderLock lock(mutex);
  auto queue = std::make_unique<EventQueue>();
  // Push until full, read half, and again: the records' sizes do not
  // divide the buffer, so the writer wraps at a different place each time,
  // some of them inside a record, which then runs on past the buffer's end.
  std::uint32_t pushed = 0;
  std::uint64_t words = 0;    // of the records pushed
  std::uint32_t past_end = 0; // records that ran on past the end
  std::uint32_t read = 0;
  std::uint64_t position = queue->begin(lock);
  for (int round = 0; round < 40; ++round) {
    std::uint32_t accepted = 0;
    while (push_nth(*queue, pushed)) {
      const std::uint64_t start = words % EventQueue::capacity_words;
      words += words_of_nth(pushed);
      past_end += start + words_of_nth(pushed) > EventQueue::capacity_words;
      ++pushed;
      ++accepted;
    }
    ASSERT_GT(accepted, 0u);
    // Full: what is queued fills the buffer to less than the next record.
    const std::uint64_t used = queue->end(lock) - queue->begin(lock);
    EXPECT_LE(used, EventQueue::capacity_words);
    EXPECT_GT(used + words_of_nth(pushed), EventQueue::capacity_words);
    const std::uint32_t target = read + (pushed - read) / 2;
    while (read < target) {
      std::uint8_t flags = 0xff;
      const PendingRecord record = read_one(*queue, position, flags, lock);
      expect_nth(record, flags, read);
      ++read;
    }
    queue->consume_until(position, lock);
  }
  EXPECT_GT(pushed, 20 * EventQueue::capacity_words / 10);
  const std::uint64_t end = queue->end(lock);
  while (position != end) {
    std::uint8_t flags = 0xff;
    const PendingRecord record = read_one(*queue, position, flags, lock);
    expect_nth(record, flags, read);
    ++read;
  }
  EXPECT_EQ(read, pushed);
  EXPECT_EQ(end, words);
  EXPECT_GT(past_end, 5u);
  queue->consume_until(position, lock);
  EXPECT_TRUE(push_nth(*queue, pushed));
}

TEST(EventQueue, HoldsMoreRegionsThanCopies) {
  auto queue = std::make_unique<EventQueue>();
  std::uint64_t pops = 0;
  while (queue->push(RegionPop{1, 0.0}))
    ++pops;
  EXPECT_EQ(pops, EventQueue::capacity_words / 3);
  auto other = std::make_unique<EventQueue>();
  std::uint64_t copies = 0;
  while (other->push(RawEvent{}))
    ++copies;
  EXPECT_EQ(copies, EventQueue::capacity_words / 10);
}

TEST(EventQueue, AsksForAFlushAtItsLimit) {
  RecorderMutex mutex;
  const RecorderLock lock(mutex);
  // 2 KiB: a third of the steps of a full queue (CUNUMPY_QUEUE_KIB=2).
  auto queue = std::make_unique<EventQueue>(256);
  EXPECT_EQ(queue->limit(), 256u);
  std::uint32_t pushed = 0;
  std::uint32_t read = 0;
  std::uint64_t position = queue->begin(lock);
  for (int round = 0; round < 200; ++round) { // far past the buffer's end
    while (push_nth(*queue, pushed))
      ++pushed;
    const std::uint64_t used = queue->end(lock) - queue->begin(lock);
    EXPECT_LE(used, 256u);
    EXPECT_GT(used + words_of_nth(pushed), 256u);
    while (position != queue->end(lock)) {
      std::uint8_t flags = 0xff;
      const PendingRecord record = read_one(*queue, position, flags, lock);
      expect_nth(record, flags, read);
      ++read;
    }
    queue->consume_until(position, lock);
  }
  EXPECT_EQ(read, pushed);
  EXPECT_GT(pushed, 4 * EventQueue::capacity_words / 5);
}

TEST(EventQueue, ALimitLoweredBelowWhatItHoldsRefusesUntilRead) {
  RecorderMutex mutex;
  const RecorderLock lock(mutex);
  auto queue = std::make_unique<EventQueue>();
  std::uint32_t pushed = 0;
  while (pushed < 100)
    ASSERT_TRUE(push_nth(*queue, pushed++));
  queue->set_limit(EventQueue::min_limit_words); // holds more than that now
  EXPECT_FALSE(push_nth(*queue, pushed));
  std::uint64_t position = queue->begin(lock);
  std::uint32_t read = 0;
  while (position != queue->end(lock)) {
    std::uint8_t flags = 0xff;
    const PendingRecord record = read_one(*queue, position, flags, lock);
    expect_nth(record, flags, read);
    ++read;
  }
  EXPECT_EQ(read, 100u); // nothing queued is lost
  queue->consume_until(position, lock);
  EXPECT_TRUE(push_nth(*queue, pushed));
}

TEST(EventQueue, LimitsAreClampedToWhatTheBufferHolds) {
  EXPECT_EQ(EventQueue(0).limit(), EventQueue::min_limit_words);
  EXPECT_EQ(EventQueue(1u << 30).limit(), EventQueue::capacity_words);
  EXPECT_EQ(EventQueue().limit(), EventQueue::capacity_words);
}

} // namespace
