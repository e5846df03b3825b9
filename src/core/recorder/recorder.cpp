#include "recorder/recorder.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <variant>

#include <cunumpy/event.hpp>

#include "recorder/thread_state.hpp"
#include "support/environment.hpp"

namespace cunumpy::Impl {
namespace {

/// "a, b,c" -> {"a", "b", "c"}
std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos)
      end = list.size();
    std::string name = list.substr(start, end - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty())
      names.push_back(std::move(name));
    start = end + 1;
  }
  return names;
}

std::atomic<int> injected_failures{0};

/// When a record happened: the order of records from different threads.
double time_of(const PendingRecord& record) {
  if (const auto* event = std::get_if<RawEvent>(&record))
    return event->start + event->duration;
  if (const auto* push = std::get_if<RegionPush>(&record))
    return push->time;
  if (const auto* pop = std::get_if<RegionPop>(&record))
    return pop->time;
  if (const auto* kernel = std::get_if<KernelSpan>(&record))
    return kernel->end;
  if (const auto* allocation = std::get_if<Allocation>(&record))
    return allocation->time;
  return std::get<DualViewEvent>(record).time;
}

} // namespace

void inject_allocation_failures(int count) noexcept {
  injected_failures.store(count, std::memory_order_relaxed);
}

void allocation_point() {
  if (injected_failures.load(std::memory_order_relaxed) > 0 &&
      injected_failures.fetch_sub(1, std::memory_order_relaxed) > 0)
    throw std::bad_alloc();
}

RecorderSettings RecorderSettings::from_environment() {
  RecorderSettings settings;
  settings.backtrace_depth = environment_integer(
      "CUNUMPY_BACKTRACE", settings.backtrace_depth, 0, max_frames);
  if (const auto list = environment("CUNUMPY_DEVICE_SPACES"))
    settings.device_spaces = split_names(*list);
  settings.debug_sync = environment_integer("CUNUMPY_DEBUG_SYNC", 0, 0, 1) == 1;
  settings.cupti = environment_integer("CUNUMPY_CUPTI", 1, 0, 1) == 1;
  return settings;
}

Recorder::Recorder(const RecorderSettings& settings)
    : backtrace_depth_(settings.backtrace_depth),
      debug_sync_(settings.debug_sync ? 1 : 0), settings_(settings),
      spaces_(settings.device_spaces) {}

Recorder& Recorder::instance() {
  // Never destroyed: Kokkos may report events during static destruction.
  static Recorder* recorder = [] {
    auto* made = new Recorder(RecorderSettings::from_environment());
    // The call sites symbolized by then, for the next runs (the plugin
    // saves them at Kokkos' finalize already). Not while another thread
    // holds the mutex: the exit never waits for it.
    std::atexit([] {
      Recorder& recorder = instance();
      const RecorderLock lock = recorder.try_lock();
      if (lock.owns())
        recorder.save_site_cache(lock);
    });
    return made;
  }();
  return *recorder;
}

void Recorder::attach(EventSink* sink) {
  before_read(); // a sink's losses are those after it was attached
  const RecorderLock lock(mutex_);
  flush(lock); // what happened before is not the new sink's
  for (auto& [attached, references] : sinks_) {
    if (attached == sink) {
      ++references;
      return;
    }
  }
  sinks_.emplace_back(sink, 1);
  if (sink->wants_allocations())
    allocations_wanted_.fetch_add(1, std::memory_order_acq_rel);
  if (sink->wants_contents())
    contents_wanted_.fetch_add(1, std::memory_order_acq_rel);
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

void Recorder::detach(EventSink* sink) {
  // What happened until now includes the events waiting for CUDA's record.
  if (LateSource* late = late_source_.load(std::memory_order_acquire))
    late->collect();
  const RecorderLock lock(mutex_);
  flush(lock); // what happened until now is still the sink's
  auto it = std::find_if(sinks_.begin(), sinks_.end(), [&](const auto& entry) {
    return entry.first == sink;
  });
  if (it == sinks_.end())
    return;
  if (--it->second == 0) {
    if (sink->wants_allocations())
      allocations_wanted_.fetch_sub(1, std::memory_order_acq_rel);
    if (sink->wants_contents())
      contents_wanted_.fetch_sub(1, std::memory_order_acq_rel);
    sinks_.erase(it);
  }
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

namespace {

void give(EventSink& sink, const RawEvent& event, const RecorderLock& lock) {
  sink.on_event(event, lock);
}
void give(EventSink& sink, const RegionPush& push, const RecorderLock& lock) {
  sink.on_region_push(push, lock);
}
void give(EventSink& sink, const RegionPop& pop, const RecorderLock& lock) {
  sink.on_region_pop(pop, lock);
}
void give(EventSink& sink, const DualViewEvent& event,
          const RecorderLock& lock) {
  sink.on_dual_view(event, lock);
}
void give(EventSink& sink, const KernelSpan& kernel, const RecorderLock& lock) {
  sink.on_kernel(kernel, lock);
}
void give(EventSink& sink, const Allocation& allocation,
          const RecorderLock& lock) {
  sink.on_allocation(allocation, lock);
}

} // namespace

template <class Record>
void Recorder::deliver(const Record& record,
                       const RecorderLock& lock) noexcept {
  try {
    for (auto& entry : sinks_)
      give(*entry.first, record, lock);
  } catch (...) {
    // A sink out of memory loses this record, not the others; the sinks
    // are told that one may be missing.
    count_lost(LossReason::sink_failed);
  }
}

template <class Record>
void Recorder::deliver(const Record& record, std::uint8_t flags,
                       const RecorderLock& lock) noexcept {
  deliver(record, lock);
  if constexpr (std::is_same_v<Record, RawEvent>) {
    if ((flags & EventQueue::followed_by_wait) != 0)
      deliver(scalar_read_wait(record), lock);
  }
}

void Recorder::count_lost(LossReason reason, std::uint64_t count) noexcept {
  lost_[static_cast<std::size_t>(reason)].fetch_add(count,
                                                    std::memory_order_relaxed);
}

void Recorder::deliver_losses(const RecorderLock& lock) noexcept {
  for (std::size_t i = 0; i < loss_reason_count; ++i) {
    if (lost_[i].load(std::memory_order_relaxed) == 0)
      continue;
    const std::uint64_t count = lost_[i].exchange(0, std::memory_order_relaxed);
    const Loss loss{static_cast<LossReason>(i), count, 0};
    for (auto& entry : sinks_) {
      try {
        entry.first->on_loss(loss, lock);
      } catch (...) {
        // A sink that cannot note a loss cannot be trusted either; it
        // keeps no state that could say so, so this is the one loss that
        // stays unreported.
      }
    }
  }
}

std::uint32_t Recorder::open_incident(std::string text,
                                      const RecorderLock& lock) {
  flush(lock); // the events before the incident are complete
  incidents_.push_back({std::move(text), false, {}});
  const auto id = static_cast<std::uint32_t>(incidents_.size());
  const Loss loss{LossReason::callbacks_replaced, 0, id};
  for (auto& entry : sinks_)
    entry.first->on_loss(loss, lock);
  return id;
}

void Recorder::retract_incident(std::uint32_t id, std::string why,
                                const RecorderLock&) {
  Incident& incident = incidents_.at(id - 1);
  incident.retracted = true;
  incident.retraction = std::move(why);
}

void Recorder::before_read() noexcept {
  if (const ReadCheck check = read_check_.load(std::memory_order_acquire))
    check();
  if (LateSource* late = late_source_.load(std::memory_order_acquire))
    late->collect();
}

double Recorder::late_horizon() const noexcept {
  if (const LateSource* late = late_source_.load(std::memory_order_acquire))
    return late->horizon();
  return std::numeric_limits<double>::infinity();
}

void Recorder::flush(const RecorderLock& lock) {
  clock_.calibrate(); // with the mutex: one caller at a time
  // Records a thread queues while this runs wait for the next flush.
  const std::size_t count = queues_.size();
  cursors_.resize(3 * count);
  std::uint64_t* const next = cursors_.data();
  std::uint64_t* const end = next + count;
  std::uint64_t* const flags = end + count; // of merged_[i]
  std::size_t waiting = 0;
  for (std::size_t i = 0; i < count; ++i) {
    next[i] = queues_[i]->begin(lock);
    end[i] = queues_[i]->end(lock);
    waiting += next[i] != end[i] ? 1 : 0;
  }
  const auto give_to_sinks = [this, &lock](const auto& record,
                                           std::uint8_t record_flags) {
    deliver(record, record_flags, lock);
  };
  if (waiting == 1) {
    // The usual case: one thread made events since the last flush.
    for (std::size_t i = 0; i < count; ++i) {
      while (next[i] != end[i])
        queues_[i]->read(next[i], lock, give_to_sinks);
      queues_[i]->consume_until(end[i], lock);
    }
  } else if (waiting > 1) {
    // Several threads: the earliest record first. Each thread's records
    // are in its order already; merged_[i] is the next of thread i's, read
    // when flags[i] is not `none`.
    constexpr std::uint64_t none = ~std::uint64_t(0);
    merged_.resize(count);
    const auto read_next = [&](std::size_t i) {
      flags[i] = none;
      if (next[i] != end[i])
        queues_[i]->read(next[i], lock,
                         [&](const auto& record, std::uint8_t record_flags) {
                           merged_[i] = record;
                           flags[i] = record_flags;
                         });
    };
    for (std::size_t i = 0; i < count; ++i)
      read_next(i);
    for (;;) {
      std::size_t earliest = count;
      double earliest_time = 0.0;
      for (std::size_t i = 0; i < count; ++i) {
        if (flags[i] == none)
          continue;
        const double time = time_of(merged_[i]);
        if (earliest == count || time < earliest_time) {
          earliest = i;
          earliest_time = time;
        }
      }
      if (earliest == count)
        break;
      const auto record_flags = static_cast<std::uint8_t>(flags[earliest]);
      std::visit(
          [&](const auto& record) { give_to_sinks(record, record_flags); },
          merged_[earliest]);
      read_next(earliest);
    }
    for (std::size_t i = 0; i < count; ++i)
      queues_[i]->consume_until(end[i], lock);
  }
  if (LateSource* late = late_source_.load(std::memory_order_acquire)) {
    // After the queued records: a sink places a late event among the
    // regions it has seen by then.
    late_events_.clear();
    late->drain(late_events_, lock);
    for (const RawEvent& event : late_events_)
      deliver(event, lock);
  }
  deliver_losses(lock);
  if (resolve_sites_at_flush_.load(std::memory_order_relaxed)) {
    try {
      sites_.resolve_new();
    } catch (...) {
      // Unresolved, a site's walk is compared whole: nothing is lost.
    }
  }
}

template <class Record>
void Recorder::post(const Record& record, std::uint8_t flags) {
  ThreadState& thread = thread_state();
  if (!thread.queue) {
    allocation_point();
    auto queue = std::make_unique<EventQueue>();
    add_queue(queue.get()); // gives it the queues' limit
    thread.queue = std::move(queue);
  }
  while (!thread.queue->push(record, flags))
    flush_full_queue();
}

[[gnu::noinline, gnu::cold]] void Recorder::flush_full_queue() {
  const double start = now();
  const RecorderLock lock(mutex_);
  flush(lock);
  const double seconds = now() - start;
  ++full_queue_flushes_.count;
  full_queue_flushes_.seconds += seconds;
  full_queue_flushes_.longest = std::max(full_queue_flushes_.longest, seconds);
}

template void Recorder::post(const RawEvent&, std::uint8_t);
template void Recorder::post(const RegionPush&, std::uint8_t);
template void Recorder::post(const RegionPop&, std::uint8_t);
template void Recorder::post(const DualViewEvent&, std::uint8_t);
template void Recorder::post(const KernelSpan&, std::uint8_t);
template void Recorder::post(const Allocation&, std::uint8_t);

void Recorder::add_queue(EventQueue* queue) {
  const RecorderLock lock(mutex_);
  queue->set_limit(queue_words()); // under the mutex: set_queue_words' too
  queues_.push_back(queue);
}

void Recorder::set_queue_words(std::uint64_t words) {
  const RecorderLock lock(mutex_);
  words = EventQueue::clamp_limit(words);
  queue_words_.store(words, std::memory_order_relaxed);
  for (EventQueue* queue : queues_)
    queue->set_limit(words);
}

void Recorder::remove_queue(EventQueue* queue) {
  const RecorderLock lock(mutex_);
  flush(lock);
  queues_.erase(std::remove(queues_.begin(), queues_.end(), queue),
                queues_.end());
}

std::uint64_t Recorder::fullest_queue(const RecorderLock& lock) const noexcept {
  std::uint64_t fullest = 0;
  for (const EventQueue* queue : queues_)
    fullest = std::max(fullest, queue->end(lock) - queue->begin(lock));
  return fullest;
}

void Recorder::set_backtrace_depth(int depth) noexcept {
  backtrace_depth_.store(std::clamp(depth, 0, max_frames),
                         std::memory_order_relaxed);
}

Event to_public(const RawEvent& raw, const RecorderLock& lock) {
  Recorder& recorder = Recorder::instance();
  const StringTable& strings = recorder.strings(lock);
  Event event;
  event.kind = raw.kind;
  event.nbytes = raw.nbytes;
  event.what = strings.view(raw.description);
  event.label = strings.view(raw.label);
  event.src_space = strings.view(raw.src_space);
  event.dst_space = strings.view(raw.dst_space);
  event.site = recorder.sites(lock).resolve(raw.site);
  event.blocking = raw.blocking;
  event.async = raw.async();
  event.implicit = raw.implicit;
  event.thread = raw.thread;
  event.timestamp = raw.start;
  event.duration = raw.duration;
  event.source = raw.source();
  event.src_memory = raw.src_memory();
  event.dst_memory = raw.dst_memory();
  event.device_duration = raw.device_seconds();
  return event;
}

RecorderLock lock_recorder() {
  Recorder& recorder = Recorder::instance();
  recorder.before_read();
  RecorderLock lock = recorder.lock();
  recorder.flush(lock);
  return lock;
}

} // namespace cunumpy::Impl
