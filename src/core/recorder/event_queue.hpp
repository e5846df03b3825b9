#ifndef CUNUMPY_SRC_RECORDER_EVENT_QUEUE_HPP
#define CUNUMPY_SRC_RECORDER_EVENT_QUEUE_HPP

#include <atomic>
#include <cstdint>

#include "recorder/lock.hpp"
#include "recorder/records.hpp"

namespace cunumpy::Impl {

/// Records of one thread, waiting for a flush. Its thread appends without a
/// lock; the flushing thread, holding the recorder's mutex, reads what the
/// head published and then moves the tail: one writer for each counter.
class EventQueue {
public:
  /// 40 KiB a thread: tens of time steps of events between flushes. A
  /// flush's cost is mostly the sinks' state, which a step that streams
  /// more than the caches evicts: 128 records cost 5 more cache misses a
  /// heavy time step and 0.05-0.1 us more, with the same instructions
  /// (docs/performance.md, "The event queue's length").
  static constexpr std::uint64_t capacity = 512;

  /// False when the queue is full (the caller flushes and tries again).
  template <class Record> bool push(const Record& record) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == capacity)
      return false;
    records_[head % capacity] = record; // in place
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  std::uint64_t begin(const RecorderLock&) const noexcept {
    return tail_.load(std::memory_order_relaxed);
  }
  std::uint64_t end(const RecorderLock&) const noexcept {
    return head_.load(std::memory_order_acquire);
  }
  const PendingRecord& at(std::uint64_t index,
                          const RecorderLock&) const noexcept {
    return records_[index % capacity];
  }
  void consume_until(std::uint64_t index, const RecorderLock&) noexcept {
    tail_.store(index, std::memory_order_release);
  }

private:
  std::atomic<std::uint64_t> head_{0};
  std::atomic<std::uint64_t> tail_{0};
  PendingRecord records_[capacity];
};

} // namespace cunumpy::Impl

#endif
