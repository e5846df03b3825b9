#ifndef CUNUMPY_SRC_RECORDER_EVENT_QUEUE_HPP
#define CUNUMPY_SRC_RECORDER_EVENT_QUEUE_HPP

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
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

/// The words of a queued record (EventQueue): its header, then its bytes.
template <class Record> constexpr std::uint64_t queued_words() {
  return 1 + (sizeof(Record) + 7) / 8;
}

template <std::size_t... I>
constexpr std::uint64_t largest_pending_words(std::index_sequence<I...>) {
  std::uint64_t largest = 0;
  ((largest = std::max<std::uint64_t>(
        largest, queued_words<std::variant_alternative_t<I, PendingRecord>>())),
   ...);
  return largest;
}

/// Records of one thread, waiting for a flush. Its thread appends without a
/// lock; the flushing thread, holding the recorder's mutex, reads what the
/// head published and then moves the tail: one writer for each counter.
///
/// Each record takes its own size, not the largest record's: a word that
/// says which record, its flags and how many words it takes, then the
/// record, rounded up to 8 bytes. A region's push or pop takes 24 bytes, a
/// copy or a sync 80. After a time step that streams more than the caches,
/// every line the queue's records take is a miss when written and again
/// when flushed. A record that starts near the end of the buffer runs on
/// into a spare end of the largest record's size instead of wrapping, so
/// that neither side ever splits one or tests for the end.
class EventQueue {
public:
  /// 32 KiB a thread: about 110 time steps of `legacy_app --probes 3`
  /// (36 words a step) between flushes. A flush's cost is mostly the
  /// sinks' state, which a step that streams more than the caches evicts:
  /// a queue of a quarter of the steps cost 5 more cache misses a heavy
  /// time step and 0.05-0.1 us more, with the same instructions
  /// (docs/performance.md, "The event queue's length"). A power of two,
  /// so that a place in the buffer is a mask.
  static constexpr std::uint64_t capacity_words = 4096;
  static_assert((capacity_words & (capacity_words - 1)) == 0);
  /// The least a queue may hold before it asks for a flush (1 KiB).
  static constexpr std::uint64_t min_limit_words = 128;

  /// A queue that asks for a flush once it would hold more than
  /// `limit_words` (clamped to min_limit_words..capacity_words): a smaller
  /// one gives the sinks fewer records at a time, so that the thread that
  /// flushes stops for less, more often (Recorder::set_queue_words).
  explicit EventQueue(std::uint64_t limit_words = capacity_words) noexcept {
    set_limit(limit_words);
  }
  static constexpr std::uint64_t clamp_limit(std::uint64_t words) noexcept {
    return std::clamp(words, min_limit_words, capacity_words);
  }
  /// Takes effect at the next push; the words already queued stay.
  void set_limit(std::uint64_t words) noexcept {
    limit_.store(clamp_limit(words), std::memory_order_relaxed);
  }
  std::uint64_t limit() const noexcept {
    return limit_.load(std::memory_order_relaxed);
  }

  template <class Record> static constexpr std::uint64_t words_of() {
    return queued_words<Record>();
  }

  /// What a record's header may say besides its kind and size.
  enum Flags : std::uint8_t {
    /// A read into a host scalar: its wait (scalar_read_wait) follows it.
    followed_by_wait = 1,
  };

  /// False when the queue holds its limit (the caller flushes and tries
  /// again).
  template <class Record>
  bool push(const Record& record, std::uint8_t flags = 0) noexcept {
    static_assert(std::is_trivially_copyable_v<Record> && alignof(Record) <= 8);
    constexpr std::uint64_t size = words_of<Record>();
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head + size - tail_.load(std::memory_order_acquire) >
        limit_.load(std::memory_order_relaxed))
      return false;
    unsigned char* const at = place(head);
    const std::uint64_t header =
        pending_index<Record>() | std::uint64_t(flags) << 8 | size << 16;
    std::memcpy(at, &header, sizeof header);
    ::new (static_cast<void*>(at + 8)) Record(record);
    head_.store(head + size, std::memory_order_release);
    return true;
  }

  std::uint64_t begin(const RecorderLock&) const noexcept {
    return tail_.load(std::memory_order_relaxed);
  }
  std::uint64_t end(const RecorderLock&) const noexcept {
    return head_.load(std::memory_order_acquire);
  }
  /// Calls `visit(record, flags)` with the record at `position` (from
  /// begin(), or from an earlier read, and before end()) and its flags;
  /// `position` moves past it.
  template <class Visit>
  void read(std::uint64_t& position, const RecorderLock&, Visit&& visit) const {
    const unsigned char* const at = place(position);
    std::uint64_t header;
    std::memcpy(&header, at, sizeof header);
    position += header >> 16;
    visit_as(header, at + 8, visit,
             std::make_index_sequence<std::variant_size_v<PendingRecord>>{});
  }
  void consume_until(std::uint64_t position, const RecorderLock&) noexcept {
    tail_.store(position, std::memory_order_release);
  }

private:
  static constexpr std::uint64_t spare_words = largest_pending_words(
      std::make_index_sequence<std::variant_size_v<PendingRecord>>{});

  unsigned char* place(std::uint64_t position) noexcept {
    return bytes_ + 8 * (position % capacity_words);
  }
  const unsigned char* place(std::uint64_t position) const noexcept {
    return bytes_ + 8 * (position % capacity_words);
  }

  template <class Visit, std::size_t... I>
  static void visit_as(std::uint64_t header, const unsigned char* record,
                       Visit& visit, std::index_sequence<I...>) {
    const std::size_t index = header & 0xff;
    const auto flags = static_cast<std::uint8_t>(header >> 8);
    (void)((index == I
                ? (visit(*std::launder(
                             reinterpret_cast<const std::variant_alternative_t<
                                 I, PendingRecord>*>(record)),
                         flags),
                   true)
                : false) ||
           ...);
  }

  std::atomic<std::uint64_t> head_{0}; ///< in words, never wrapped
  std::atomic<std::uint64_t> tail_{0};
  /// Words it holds at most before push asks for a flush; in the line of
  /// head_ and tail_, which a push reads anyway.
  std::atomic<std::uint64_t> limit_{capacity_words};
  alignas(8) unsigned char bytes_[8 * (capacity_words + spare_words)];
};

} // namespace cunumpy::Impl

#endif
