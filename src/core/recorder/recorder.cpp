#include "recorder/recorder.hpp"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <limits>
#include <memory>
#include <new>
#include <pthread.h>

#include <cunumpy/event.hpp>

#include "call_sites/stack_capture.hpp"
#include "recorder/thread_state.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/variables.hpp"
#include "tools/callbacks.hpp"

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
  settings.backtrace_depth = read_integer("CUNUMPY_BACKTRACE");
  if (const auto list = read_text("CUNUMPY_DEVICE_SPACES"))
    settings.device_spaces = split_names(*list);
  settings.debug_sync = read_integer("CUNUMPY_DEBUG_SYNC") == 1;
  settings.cupti = read_integer("CUNUMPY_CUPTI") == 1;
  settings.allow_no_device = read_integer("CUNUMPY_ALLOW_NO_DEVICE") == 1;
  settings.run = read_run_identity();
  return settings;
}

Recorder::Recorder(const RecorderSettings& settings)
    : backtrace_depth_(settings.backtrace_depth),
      debug_sync_(settings.debug_sync ? 1 : 0), settings_(settings),
      spaces_(settings.device_spaces) {}

Recorder::~Recorder() {
  // The calling thread's state in it goes; every other thread that
  // recorded in it ended (its state left with it).
  if (ThreadState* const thread = existing_thread_state())
    thread->leave(*this);
}

Recorder& Recorder::instance() {
  // Never destroyed: Kokkos may report events during static destruction.
  static Recorder* recorder = [] {
    auto* made = new Recorder(RecorderSettings::from_environment());
    // A child forked while another thread holds a lock of cunumpy's would
    // inherit it held by a thread it does not have, and wait forever at
    // its first event or read: fork waits for every lock an event or a
    // read takes (each held for microseconds, never while calling out of
    // cunumpy, but the symbolizer's, held while a read reads debug
    // files), in the order they nest, and both sides release them.
    ::pthread_atfork([] { recorder->lock_for_fork(); },
                     [] { recorder->unlock_after_fork(); },
                     [] { recorder->unlock_after_fork(); });
    return made;
  }();
  return *recorder;
}

void Recorder::lock_for_fork() noexcept {
  // A read symbolizing call sites holds this one around the others.
  symbolizer_mutex_.lock();
  tools::lock_for_fork();
  mutex_.lock();
  sources_.lock_for_fork();
  spaces_.lock_for_fork();
  lock_stack_capture_for_fork();
}

void Recorder::unlock_after_fork() noexcept {
  unlock_stack_capture_after_fork();
  spaces_.unlock_after_fork();
  sources_.unlock_after_fork();
  mutex_.unlock();
  tools::unlock_after_fork();
  symbolizer_mutex_.unlock();
}

void Recorder::attach(EventSink* sink) {
  before_read(); // a sink's losses are those after it was attached
  const RecorderLock lock = this->lock();
  catch_up(lock); // what happened before is not the new sink's
  for (auto& [attached, references] : sinks_) {
    if (attached == sink) {
      ++references;
      return;
    }
  }
  sinks_.emplace_back(sink, 1);
  for (std::uint32_t id = 1; id <= losses_.incidents(); ++id)
    if (losses_.incident(id).standing)
      sink->on_loss({LossReason::incident, 0, static_cast<std::uint32_t>(id)},
                    lock);
  if (sink->wants_allocations())
    allocations_wanted_.fetch_add(1, std::memory_order_acq_rel);
  if (sink->wants_contents())
    contents_wanted_.fetch_add(1, std::memory_order_acq_rel);
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

void Recorder::detach(EventSink* sink) {
  // What happened until now includes the events waiting in the sources.
  sources_.collect();
  const RecorderLock lock = this->lock();
  catch_up(lock); // what happened until now is still the sink's
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

template <class Record, class Give>
void Recorder::deliver_to_sinks(const Record& record, Give give) noexcept {
  // The time-stamp counter is read once its rate is known, a millisecond
  // after the start; until then (and where it is not invariant) the steady
  // clock. One caller at a time: the mutex is held.
  clock_.calibrate();
  for (auto& entry : sinks_) {
    try {
      give(*entry.first, record);
    } catch (...) {
      // A sink out of memory loses this record, not the others; it is
      // told that one may be missing.
      losses_.count(LossReason::sink_failed);
    }
  }
}

void Recorder::deliver(const RawEvent& event,
                       const RecorderLock& lock) noexcept {
  deliver_to_sinks(event, [&](EventSink& sink, const RawEvent& record) {
    sink.on_event(record, lock);
  });
}
void Recorder::deliver(const DualViewEvent& event,
                       const RecorderLock& lock) noexcept {
  deliver_to_sinks(event, [&](EventSink& sink, const DualViewEvent& record) {
    sink.on_dual_view(record, lock);
  });
}
void Recorder::deliver(const KernelSpan& kernel,
                       const RecorderLock& lock) noexcept {
  deliver_to_sinks(kernel, [&](EventSink& sink, const KernelSpan& record) {
    sink.on_kernel(record, lock);
  });
}
void Recorder::deliver(const Allocation& allocation,
                       const RecorderLock& lock) noexcept {
  deliver_to_sinks(allocation, [&](EventSink& sink, const Allocation& record) {
    sink.on_allocation(record, lock);
  });
}

void Recorder::deliver_losses(const RecorderLock& lock) noexcept {
  // A sink that cannot note a loss cannot be trusted either; it keeps no
  // state that could say so, so this is the one loss that stays unreported.
  losses_.take([&](const Loss& loss) {
    deliver_to_sinks(loss, [&](EventSink& sink, const Loss& record) {
      sink.on_loss(record, lock);
    });
  });
}

std::uint32_t Recorder::open_incident(std::string text,
                                      const RecorderLock& lock, bool standing) {
  const std::uint32_t id = losses_.add_incident(std::move(text), standing);
  const Loss loss{LossReason::incident, 0, id};
  deliver_to_sinks(loss, [&](EventSink& sink, const Loss& record) {
    sink.on_loss(record, lock);
  });
  return id;
}

void Recorder::before_read() noexcept {
  if (const ReadCheck check = read_check_.load(std::memory_order_acquire))
    check();
  sources_.collect();
}

void Recorder::catch_up(const RecorderLock& lock) {
  clock_.calibrate(); // with the mutex: one caller at a time
  if (sources_.any()) {
    start_timeline();
    late_events_.clear();
    sources_.for_each([&](EventSource& source) {
      // Each source gives its events oldest first; so do all of them.
      const auto drained = static_cast<std::ptrdiff_t>(late_events_.size());
      source.drain(late_events_, lock);
      std::inplace_merge(late_events_.begin(), late_events_.begin() + drained,
                         late_events_.end(),
                         [](const RawEvent& a, const RawEvent& b) {
                           return a.start < b.start;
                         });
    });
    for (RawEvent& event : late_events_) {
      if (event.region_thread == unplaced) {
        // A record of something no thread of the program did (CUDA's of a
        // migration): where the main thread was then.
        RegionTimeline::State state;
        if (!main_timeline_.at(event.start, state)) {
          losses_.count(LossReason::late_record_unplaced);
          continue;
        }
        event.node = state.node;
        event.region_thread = state.thread;
        event.call = state.call;
      }
      deliver(event, lock);
    }
    main_timeline_.forget_before(sources_.horizon());
  }
  deliver_losses(lock);
}

void Recorder::add_thread(ThreadState& thread) {
  const RecorderLock lock = this->lock();
  threads_.push_back(&thread);
}

void Recorder::remove_thread(ThreadState& thread) {
  if (lock_held_by_this_thread())
    return; // an exit from a signal handler inside cunumpy: the process ends
  const RecorderLock lock = this->lock();
  threads_.erase(std::remove(threads_.begin(), threads_.end(), &thread),
                 threads_.end());
  if (last_read_ == &thread)
    last_read_ = nullptr;
  // Regions never popped stay open after their thread (open_regions): the
  // first ones, so that threads that keep ending inside regions cannot grow
  // it without bound (the report notes open regions of running threads).
  try {
    for (const OpenRegion& region : thread.regions)
      if (left_open_.size() < max_left_open)
        left_open_.emplace_back(thread.index, region);
  } catch (...) {
    losses_.count(LossReason::record_failed);
  }
  ThreadState* main = &thread;
  main_thread_.compare_exchange_strong(main, nullptr);
  publish_shared_place(thread, true);
}

Place Recorder::place(const ThreadState& thread) noexcept {
  if (!thread.regions.empty()) {
    const OpenRegion& top = thread.regions.back();
    return {top.node, thread.index, top.call};
  }
  const std::uint32_t node = shared_node_.load(std::memory_order_acquire);
  if (node == 0)
    return {0, thread.index, 0};
  if (shared_ambiguous_.load(std::memory_order_relaxed))
    losses_.count(LossReason::placement_unknown);
  return {node, shared_thread_.load(std::memory_order_relaxed),
          shared_call_.load(std::memory_order_relaxed)};
}

void Recorder::publish_shared_place(ThreadState& thread, bool ended) noexcept {
  const bool open = !ended && !thread.regions.empty();
  if (open != thread.counted_in_regions) {
    thread.counted_in_regions = open;
    threads_in_regions_ += open ? 1 : -1;
  }
  Place shared;
  bool ambiguous = false;
  if (threads_in_regions_ == 1 && open) {
    shared = {thread.regions.back().node, thread.index,
              thread.regions.back().call};
  } else if (threads_in_regions_ > 0) {
    const ThreadState* main = main_thread_.load(std::memory_order_relaxed);
    bool found = false;
    for (const ThreadState* other : threads_) {
      if (other->regions.empty() || (ended && other == &thread))
        continue;
      const OpenRegion& top = other->regions.back();
      if (found && top.node != shared.node)
        ambiguous = true;
      if (!found || other == main)
        shared = {top.node, other->index, top.call};
      found = true;
    }
  }
  shared_thread_.store(shared.thread, std::memory_order_relaxed);
  shared_call_.store(shared.call, std::memory_order_relaxed);
  shared_ambiguous_.store(ambiguous, std::memory_order_relaxed);
  shared_node_.store(shared.node, std::memory_order_release);
}

void Recorder::set_main_thread() {
  ThreadState& thread = thread_state(*this);
  const RecorderLock lock = this->lock();
  ThreadState* none = nullptr;
  if (main_thread_.compare_exchange_strong(none, &thread))
    publish_main_place(thread, now());
}

void Recorder::publish_main_place(const ThreadState& thread,
                                  double time) noexcept {
  if (main_thread_.load(std::memory_order_relaxed) != &thread)
    return;
  const OpenRegion top =
      thread.regions.empty() ? OpenRegion{} : thread.regions.back();
  const RegionTimeline::State state{top.node, thread.index, top.call};
  if (!sources_.any()) {
    // No late event can come yet: the timeline is made from the last
    // change once one can (start_timeline), not kept on every region.
    main_change_ = {time, state};
    return;
  }
  start_timeline();
  main_timeline_.record(time, state);
}

void Recorder::start_timeline() noexcept {
  if (timeline_started_)
    return;
  main_timeline_.reset(main_change_.first, main_change_.second);
  timeline_started_ = true;
}

void Recorder::push_region(ThreadState& thread, std::uint32_t name,
                           std::uint64_t token, double time,
                           const RecorderLock& lock) {
  const std::uint32_t parent =
      thread.regions.empty() ? 0 : thread.regions.back().node;
  OpenRegion region;
  region.node = regions_.child(parent, name);
  region.name = name;
  region.token = token;
  region.since = time;
  // A region inside an open region or phase of its own name continues that
  // call (its path says which: RegionTree::Node::call_node).
  const std::uint32_t call_node = regions_.node(region.node).call_node;
  if (call_node != region.node)
    for (auto open = thread.regions.rbegin(); open != thread.regions.rend();
         ++open)
      if (regions_.node(open->node).call_node == call_node) {
        region.call = open->call;
        region.continues = true;
        break;
      }
  if (!region.continues)
    region.call = next_call_++;
  thread.regions.push_back(region);
  publish_main_place(thread, time);
  publish_shared_place(thread);
  const RegionPush push{region, thread.index};
  deliver_to_sinks(push, [&](EventSink& sink, const RegionPush& record) {
    sink.on_region_push(record, lock);
  });
}

void Recorder::pop_top(ThreadState& thread, double time,
                       const RecorderLock& lock) {
  const RegionPop pop{thread.regions.back(), thread.index, time};
  thread.regions.pop_back();
  publish_main_place(thread, time);
  publish_shared_place(thread);
  deliver_to_sinks(pop, [&](EventSink& sink, const RegionPop& record) {
    sink.on_region_pop(record, lock);
  });
}

void Recorder::pop_region(ThreadState& thread, double time,
                          std::uint32_t module, const RecorderLock& lock) {
  auto& open = thread.regions;
  auto region = std::find_if(open.rbegin(), open.rend(),
                             [](const auto& r) { return r.token == 0; });
  if (region == open.rend()) {
    // A region pushed where cunumpy did not see it, or a region popped
    // earlier closed early: what a budget makes of it is decided when it
    // is read, from the events it counted before (BudgetState).
    const UnbalancedPop pop{thread.index, time, module};
    deliver_to_sinks(pop, [&](EventSink& sink, const UnbalancedPop& record) {
      sink.on_unbalanced_pop(record, lock);
    });
    // Counted by module for the report: the first 16 by name, others as 0.
    const auto find = [this](std::uint32_t id) {
      return std::find_if(
          unbalanced_pops_.begin(), unbalanced_pops_.end(),
          [id](const auto& entry) { return entry.first == id; });
    };
    auto known = find(module);
    if (known == unbalanced_pops_.end() && unbalanced_pops_.size() >= 16)
      known = find(module = 0);
    if (known == unbalanced_pops_.end())
      known = unbalanced_pops_.insert(unbalanced_pops_.end(), {module, 0});
    ++known->second;
    return;
  }
  // Explicit phases opened inside the region stay open: taken off, and
  // put back once it is closed.
  std::vector<OpenRegion> above(region.base(), open.end());
  open.erase(region.base(), open.end());
  pop_top(thread, time, lock);
  open.insert(open.end(), above.begin(), above.end());
  publish_main_place(thread, time);
  publish_shared_place(thread);
}

void Recorder::close_phase(ThreadState& thread, std::uint64_t token,
                           double time, const RecorderLock& lock) {
  auto& open = thread.regions;
  const auto phase = std::find_if(open.begin(), open.end(),
                                  [&](auto& r) { return r.token == token; });
  if (phase == open.end())
    return; // closed on another thread, or before: nothing to close here
  // What is still open inside it closes with it.
  while (open.back().token != token)
    pop_top(thread, time, lock);
  pop_top(thread, time, lock);
}

namespace {

/// Kokkos' execution space types (Kokkos::Tools::Experimental::DeviceType).
constexpr std::string_view execution_space_names[] = {
    "Serial", "OpenMP",  "Cuda", "HIP",    "OpenMPTarget",
    "HPX",    "Threads", "SYCL", "OpenACC"};

bool is_device_backend(std::string_view name) {
  return name == "Cuda" || name == "HIP" || name == "SYCL" ||
         name == "OpenMPTarget" || name == "OpenACC";
}

/// "Cuda" from Kokkos 4's name of the default execution space, and from
/// Kokkos 3's, which is the mangled name of its type
/// ("N6Kokkos4CudaE", "N6Kokkos12Experimental3HIPE").
std::string backend_name(const std::string& declared) {
  std::string name = declared;
  int status = 0;
  if (char* readable =
          abi::__cxa_demangle(declared.c_str(), nullptr, nullptr, &status)) {
    if (status == 0)
      name = readable;
    std::free(readable);
  }
  const auto scope = name.rfind("::");
  return scope == std::string::npos ? name : name.substr(scope + 2);
}

} // namespace

void Recorder::set_default_device(const std::string& declared) {
  const std::string name = backend_name(declared);
  const RecorderLock lock = this->lock();
  default_device_ = name;
  if (is_device_backend(name))
    note_device_space();
}

profiling::DeviceStatus Recorder::device_status(const RecorderLock&) const {
  profiling::DeviceStatus status;
  const auto add = [&](std::string_view name) {
    if (std::find(status.backends.begin(), status.backends.end(), name) ==
        status.backends.end())
      status.backends.emplace_back(name);
  };
  if (!default_device_.empty())
    add(default_device_);
  const std::uint32_t seen = execution_spaces_.load(std::memory_order_relaxed);
  for (std::uint32_t type = 0; type < std::size(execution_space_names); ++type)
    if ((seen & (1u << type)) != 0)
      add(execution_space_names[type]);
  bool device = device_space_seen();
  for (const std::string& name : status.backends)
    device = device || is_device_backend(name);
  status.present = device;
  const SpaceRegistry::Unknown unknown =
      device ? SpaceRegistry::Unknown() : spaces_.unknown();
  if (unknown.copies > 0 && !unknown.names.empty()) {
    std::string names;
    for (const std::string& name : unknown.names)
      names += (names.empty() ? "'" : ", '") + printable(name) + "'";
    status.reason = std::to_string(unknown.copies) +
                    (unknown.copies == 1 ? " copy" : " copies") +
                    " to or from memory space(s) " + names +
                    ", which cunumpy does not know, taken for host copies "
                    "and not counted";
    status.unknown_spaces = unknown.names;
    // Such a run is not one without a device: the one fix is to name them
    // (with the devices named already, which the new value replaces).
    std::string value;
    for (const auto& list : {unknown.names, spaces_.devices()})
      for (const std::string& name : list)
        value += (value.empty() ? "" : ",") + printable(name);
    status.fix = "if " + names + (unknown.names.size() == 1 ? " is" : " are") +
                 " device memory, set CUNUMPY_DEVICE_SPACES=" + value;
    status.unchecked = true;
  } else if (!device) {
    std::string backends;
    for (const std::string& name : status.backends)
      backends += (backends.empty() ? "" : ", ") + name;
    status.reason =
        "no device memory space in this program (backends: " +
        (backends.empty() ? std::string("not reported") : backends) +
        "): no copy could be a transfer";
    status.fix = "set CUNUMPY_ALLOW_NO_DEVICE=1 where a run without a device "
                 "may pass (a CPU-only CI job that runs the GPU job's rules)";
    status.unchecked = !settings_.allow_no_device;
  }
  return status;
}

std::string Recorder::path(std::uint32_t node, const RecorderLock&) const {
  std::string text;
  for (; node != 0; node = regions_.node(node).parent) {
    const std::string_view name = strings_.view(regions_.node(node).name);
    text = text.empty() ? std::string(name) : std::string(name) + "/" + text;
  }
  return text;
}

std::vector<Recorder::StillOpen>
Recorder::open_regions(const RecorderLock&) const {
  std::vector<StillOpen> result;
  for (const ThreadState* thread : threads_)
    for (const OpenRegion& region : thread->regions)
      result.push_back({region, thread->index,
                        thread == main_thread_.load(std::memory_order_relaxed),
                        false});
  for (const auto& [index, region] : left_open_)
    result.push_back({region, index, false, true});
  return result;
}

OpenRegions Recorder::open_regions(std::uint32_t thread,
                                   const RecorderLock&) const noexcept {
  if (last_read_ == nullptr || last_read_->index != thread) {
    const auto found =
        std::find_if(threads_.begin(), threads_.end(),
                     [&](const ThreadState* t) { return t->index == thread; });
    if (found == threads_.end())
      return {};
    last_read_ = *found;
  }
  return {last_read_->regions.data(),
          last_read_->regions.data() + last_read_->regions.size()};
}

void Recorder::set_backtrace_depth(int depth) noexcept {
  backtrace_depth_.store(std::clamp(depth, 0, max_frames),
                         std::memory_order_relaxed);
}

Event to_public(const RawEvent& raw, const RecorderLock& lock) {
  Recorder& recorder = lock.recorder();
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
  event.source = recorder.sources().name(raw.origin);
  event.src_memory = raw.src_memory();
  event.dst_memory = raw.dst_memory();
  event.device_duration = raw.device_seconds();
  return event;
}

void Recorder::symbolize(const std::vector<SiteTable::Stack>& stacks) noexcept {
  const std::lock_guard symbolizing(symbolizer_mutex_);
  for (const SiteTable::Stack& stack : stacks) {
    try {
      Symbolizer::Site site =
          symbolizer_.site(stack.frames.data(), stack.frames.size());
      const RecorderLock lock = this->lock();
      sites_.symbolized(stack.id, std::move(site));
    } catch (...) {
      // Left unsymbolized: its reports say so, the next read tries again.
    }
  }
}

RecorderLock lock_recorder(Recorder& recorder) {
  recorder.before_read();
  // Call sites are symbolized outside the mutex; a stack interned
  // meanwhile is symbolized in the next round, and after a few rounds by
  // the next read.
  constexpr int symbolizing_rounds = 3;
  for (int round = 0;; ++round) {
    std::vector<SiteTable::Stack> stacks;
    {
      RecorderLock lock = recorder.lock();
      recorder.catch_up(lock);
      if (round < symbolizing_rounds &&
          !recorder.symbolizing_on_this_thread()) {
        try {
          stacks = recorder.sites(lock).unsymbolized();
        } catch (const std::bad_alloc&) {
          stacks.clear();
        }
      }
      if (stacks.empty())
        return lock;
    }
    recorder.symbolize(stacks);
  }
}

} // namespace cunumpy::Impl

namespace cunumpy::Impl {

StringTable& RecorderLock::strings() const {
  return recorder_->strings(*this);
}
SiteTable& RecorderLock::sites() const {
  return recorder_->sites(*this);
}
const RegionTree& RecorderLock::regions() const {
  return recorder_->regions(*this);
}
OpenRegions RecorderLock::open_regions(std::uint32_t thread) const {
  return recorder_->open_regions(thread, *this);
}
std::uint64_t RecorderLock::calls_begun() const {
  return recorder_->calls_begun(*this);
}
const Incident& RecorderLock::incident(std::uint32_t id) const {
  return recorder_->incident(id, *this);
}
std::string RecorderLock::path(std::uint32_t node) const {
  return recorder_->path(node, *this);
}
profiling::DeviceStatus RecorderLock::device_status() const {
  return recorder_->device_status(*this);
}
std::string_view RecorderLock::source_name(std::uint8_t id) const {
  return recorder_->sources().name(id);
}
std::string RecorderLock::migrations_unseen() const {
  std::string text;
  recorder_->sources().for_each([&text](const EventSource& source) {
    if (std::string why = source.migrations_unseen(); !why.empty())
      text += (text.empty() ? "" : "; ") + why;
  });
  return text;
}
const RecorderSettings& RecorderLock::settings() const {
  return recorder_->settings();
}

} // namespace cunumpy::Impl
