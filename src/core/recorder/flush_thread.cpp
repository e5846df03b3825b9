// The flush thread (flush_thread.hpp).

#include "recorder/flush_thread.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <pthread.h>
#include <stdexcept>
#include <unistd.h>

#include "recorder/recorder.hpp"

namespace cunumpy::Impl {
namespace {

/// The running flush thread's recorder, for the fork handlers.
std::atomic<Recorder*> active{nullptr};
/// Whether the fork handlers hold the recorder's mutex.
bool held_across_fork = false;

} // namespace

void FlushThread::before_fork() noexcept {
  held_across_fork = false;
  Recorder* const recorder = active.load(std::memory_order_acquire);
  if (recorder == nullptr)
    return;
  // The flush thread holds the mutex for one flush at a time (tens of
  // microseconds); a thread that forks while it holds the mutex itself
  // (from inside a sink) must not wait for itself: after a second, the
  // fork goes ahead without it, as it would without a flush thread.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!recorder->mutex_.try_lock()) {
    if (std::chrono::steady_clock::now() > give_up)
      return;
    std::this_thread::yield();
  }
  held_across_fork = true;
}

void FlushThread::after_fork() noexcept {
  if (!held_across_fork)
    return;
  held_across_fork = false;
  if (Recorder* const recorder = active.load(std::memory_order_acquire))
    recorder->mutex_.unlock();
}

FlushThread::FlushThread(Recorder& recorder)
    : FlushThread(recorder, Options{}) {}

FlushThread::FlushThread(Recorder& recorder, Options options)
    : recorder_(recorder), options_(options), owner_(::getpid()) {
  Recorder* expected = nullptr;
  if (!active.compare_exchange_strong(expected, &recorder,
                                      std::memory_order_acq_rel))
    throw std::logic_error("a flush thread runs already");
  static std::once_flag handlers;
  std::call_once(handlers, [] {
    ::pthread_atfork(&FlushThread::before_fork, &FlushThread::after_fork,
                     &FlushThread::after_fork);
  });
  // Made with every signal blocked, which the thread inherits: a signal
  // meant for the program reaches one of its own threads.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    active.store(nullptr, std::memory_order_release);
    throw;
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

FlushThread::~FlushThread() {
  stop();
}

void FlushThread::stop() noexcept {
  if (!thread_.joinable())
    return;
  if (::getpid() != owner_) {
    // A forked child: the thread is its parent's. A std::thread destroyed
    // joinable ends the process, so it is kept, never destroyed.
    new (std::nothrow) std::thread(std::move(thread_));
    return;
  }
  {
    const std::lock_guard guard(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  active.store(nullptr, std::memory_order_release);
}

void FlushThread::run() noexcept {
#if defined(__GLIBC__)
  ::pthread_setname_np(::pthread_self(), "cunumpy-flush");
#endif
  using Clock = std::chrono::steady_clock;
  double period = std::clamp(1e-3, options_.min_period, options_.max_period);
  Clock::time_point last = Clock::now();
  std::unique_lock guard(mutex_);
  while (!stop_) {
    wake_.wait_for(guard, std::chrono::duration<double>(period),
                   [this] { return stop_; });
    if (stop_)
      break;
    guard.unlock();
    std::uint64_t words = 0;
    bool owned = false;
    try {
      const RecorderLock lock = recorder_.try_lock();
      owned = lock.owns();
      if (owned) {
        words = recorder_.fullest_queue(lock);
        if (words > 0) {
          recorder_.flush(lock);
          flushes_.fetch_add(1, std::memory_order_relaxed);
        }
      }
    } catch (...) {
      // What a flush could not give stays queued for the next one.
    }
    const Clock::time_point now = Clock::now();
    if (owned) {
      // The next wake when the fullest queue, at the rate seen since the
      // last one, would be `target` full (of the queues' limit, which
      // CUNUMPY_QUEUE_KIB sets); twice as late when it was empty.
      const double target =
          options_.target_fill * static_cast<double>(recorder_.queue_words());
      const double waited = std::chrono::duration<double>(now - last).count();
      period = words == 0 ? period * 2
                          : waited * target / static_cast<double>(words);
      period = std::clamp(period, options_.min_period, options_.max_period);
      last = now;
    }
    guard.lock();
  }
}

} // namespace cunumpy::Impl
