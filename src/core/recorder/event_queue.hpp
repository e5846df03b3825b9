#ifndef CUNUMPY_SRC_RECORDER_EVENT_QUEUE_HPP
#define CUNUMPY_SRC_RECORDER_EVENT_QUEUE_HPP

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <variant>

#include "recorder/lock.hpp"
#include "recorder/records.hpp"

namespace cunumpy::Impl {

/// The index of `Record` among PendingRecord's alternatives.
template <class Record, std::size_t I = 0>
constexpr std::uint64_t pending_index() {
  static_assert(I < std::variant_size_v<PendingRecord>,
                "not a record a thread queues");
  if constexpr (std::is_same_v<Record,
                               std::variant_alternative_t<I, PendingRecord>>)
    return I;
  else
    return pending_index<Record, I + 1>();
}

/// Records of one thread, waiting for a flush. Its thread appends without a
/// lock; the flushing thread, holding the recorder's mutex, reads what the
/// head published and then moves the tail: one writer for each counter.
///
/// Each record takes its own size, not the largest record's: a word that
/// says which record and how many words it takes, then its bytes, rounded
/// up to 8. A region's push or pop takes 24 bytes, a copy or a sync 80.
/// After a time step that streams more than the caches, every line the
/// queue's records take is a miss when written and again when flushed.
class EventQueue {
public:
  /// 40 KiB a thread: tens of time steps of events between flushes. A
  /// flush's cost is mostly the sinks' state, which a step that streams
  /// more than the caches evicts: a fifth of this length cost 5 more cache
  /// misses a heavy time step and 0.05-0.1 us more, with the same
  /// instructions (docs/performance.md, "The event queue's length").
  static constexpr std::uint64_t capacity_words = 5120;

  template <class Record> static constexpr std::uint64_t words_of() {
    return 1 + (sizeof(Record) + 7) / 8;
  }

  /// What a record's header may say besides its kind and size.
  enum Flags : std::uint8_t {
    /// A read into a host scalar: its wait (scalar_read_wait) follows it.
    followed_by_wait = 1,
  };

  /// False when the queue is full (the caller flushes and tries again).
  template <class Record>
  bool push(const Record& record, std::uint8_t flags = 0) noexcept {
    static_assert(std::is_trivially_copyable_v<Record>);
    constexpr std::uint64_t size = words_of<Record>();
    std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t room = capacity_words - head % capacity_words;
    // A record is never split at the end of the buffer: a marker there
    // sends the reader back to its start.
    const std::uint64_t skipped = room < size ? room : 0;
    if (head + skipped + size - tail_.load(std::memory_order_acquire) >
        capacity_words)
      return false;
    if (skipped != 0) {
      words_[head % capacity_words] = wrap_marker;
      head += skipped;
    }
    std::uint64_t* const at = &words_[head % capacity_words];
    at[0] = pending_index<Record>() | std::uint64_t(flags) << 8 | size << 16;
    std::memcpy(at + 1, &record, sizeof(Record));
    head_.store(head + size, std::memory_order_release);
    return true;
  }

  std::uint64_t begin(const RecorderLock&) const noexcept {
    return tail_.load(std::memory_order_relaxed);
  }
  std::uint64_t end(const RecorderLock&) const noexcept {
    return head_.load(std::memory_order_acquire);
  }
  /// The record at `position` (from begin(), or from an earlier read, and
  /// before end()) and its flags; `position` moves past it.
  PendingRecord read(std::uint64_t& position, std::uint8_t& flags,
                     const RecorderLock&) const noexcept {
    if (words_[position % capacity_words] == wrap_marker)
      position += capacity_words - position % capacity_words;
    const std::uint64_t* const at = &words_[position % capacity_words];
    flags = static_cast<std::uint8_t>(at[0] >> 8);
    position += at[0] >> 16;
    return decode(
        at, std::make_index_sequence<std::variant_size_v<PendingRecord>>{});
  }
  void consume_until(std::uint64_t position, const RecorderLock&) noexcept {
    tail_.store(position, std::memory_order_release);
  }

private:
  /// A header no record has: the rest of the buffer is empty.
  static constexpr std::uint64_t wrap_marker = ~std::uint64_t(0);

  template <std::size_t... I>
  static PendingRecord decode(const std::uint64_t* at,
                              std::index_sequence<I...>) noexcept {
    PendingRecord record;
    const std::size_t index = at[0] & 0xff;
    ((index == I ? (record = decode_as<I>(at), 0) : 0), ...);
    return record;
  }
  template <std::size_t I>
  static auto decode_as(const std::uint64_t* at) noexcept {
    using Record = std::variant_alternative_t<I, PendingRecord>;
    static_assert(std::is_trivially_copyable_v<Record>);
    Record record;
    std::memcpy(static_cast<void*>(&record), at + 1, sizeof record);
    return record;
  }

  std::atomic<std::uint64_t> head_{0}; ///< in words, never wrapped
  std::atomic<std::uint64_t> tail_{0};
  std::uint64_t words_[capacity_words];
};

} // namespace cunumpy::Impl

#endif
