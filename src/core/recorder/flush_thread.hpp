#ifndef CUNUMPY_SRC_RECORDER_FLUSH_THREAD_HPP
#define CUNUMPY_SRC_RECORDER_FLUSH_THREAD_HPP

// A thread of cunumpy's own that gives the queued records to the sinks
// while the program runs (the plugin's CUNUMPY_FLUSH_THREAD=1). Without it
// the thread that makes the events flushes its queue when the queue is
// full: about once every hundred time steps, one step pays for the sinks of
// all of them (tens of microseconds, a stall of one rank that the other
// ranks of a bulk-synchronous program wait for). With it, that work runs on
// another core, if the process has one to spare: it moves, it does not
// shrink. A queue that fills before the flush thread comes is still flushed
// by its own thread, as without it, so no event waits and none is lost.
//
// The thread wakes as often as keeps the fullest queue about three
// quarters full at the rate it saw (between 50 us and 10 ms: a quarter
// woke it three times as often, for four times the CPU time and no time
// gained, docs/performance.md, "The flush thread"), takes the recorder's
// mutex only if it is free (a reader holding it flushes anyway), blocks
// every signal (the program's handlers run on its own threads), and is
// named "cunumpy-flush". Across a fork it holds the mutex, so that the
// child never inherits it held by a thread the child does not have; in the
// child the flush thread does not exist and is never joined.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <sys/types.h>
#include <thread>

namespace cunumpy::Impl {

class Recorder;

class FlushThread {
public:
  struct Options {
    double min_period = 50e-6; ///< seconds between two wakes, at least
    double max_period = 10e-3; ///< and at most
    /// The fill of the fullest queue a wake aims at, of its capacity.
    double target_fill = 0.75;
  };

  /// Starts the thread. Throws std::system_error when it cannot, and
  /// std::logic_error when another flush thread runs.
  explicit FlushThread(Recorder& recorder);
  FlushThread(Recorder& recorder, Options options);
  ~FlushThread();
  FlushThread(const FlushThread&) = delete;
  FlushThread& operator=(const FlushThread&) = delete;

  /// Ends the thread after its current flush; records queued after that
  /// wait for the next flush of another kind. Idempotent; in a forked
  /// child, where the thread does not exist, only forgets it.
  void stop() noexcept;

  /// The flushes the thread made that gave the sinks at least one record.
  std::uint64_t flushes() const noexcept {
    return flushes_.load(std::memory_order_relaxed);
  }

private:
  void run() noexcept;
  /// pthread_atfork's handlers: the recorder's mutex held across a fork.
  static void before_fork() noexcept;
  static void after_fork() noexcept;

  Recorder& recorder_;
  Options options_;
  pid_t owner_;
  std::mutex mutex_; ///< guards stop_ and the wait
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<std::uint64_t> flushes_{0};
  std::thread thread_;
};

} // namespace cunumpy::Impl

#endif
