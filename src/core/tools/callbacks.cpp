#include "tools/callbacks.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <vector>

#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "support/environment.hpp"
#include "support/fast_thread_local.hpp"

namespace cunumpy::Impl::tools {
namespace {

constexpr unsigned index_of(Slot slot) noexcept {
  return static_cast<unsigned>(slot);
}
static_assert(slot_count <= 32, "the re-entry masks have 32 bits");

void* field(const kokkosp::EventSet& table, Slot slot) noexcept {
  switch (slot) {
#define CUNUMPY_TOOLS_GET(name, type, entry)                                   \
  case Slot::name:                                                             \
    return reinterpret_cast<void*>(table.name);
    CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_GET)
#undef CUNUMPY_TOOLS_GET
  }
  return nullptr;
}

void set_field(kokkosp::EventSet& table, Slot slot, void* function) noexcept {
  switch (slot) {
#define CUNUMPY_TOOLS_SET(name, type, entry)                                   \
  case Slot::name:                                                             \
    table.name = reinterpret_cast<type>(function);                             \
    return;
    CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_SET)
#undef CUNUMPY_TOOLS_SET
  }
}

/// What every event reads in this file, in one cache line of its own
/// (after a time step that streams more than the caches, each line an event
/// reads is a miss): which slots forward to a next tool, whether the watch
/// of Kokkos' table is on and when it last looked. Where each slot forwards
/// is in the lines after it, read only when its bit is set: the 32 pointers
/// span four lines, and an event of each kind read a different one.
struct alignas(64) HotState {
  /// The recorder the callbacks feed (connect); null before.
  std::atomic<Recorder*> recorder{nullptr};
  std::atomic<std::uint32_t> chained{0}; ///< bit i: next_slots[i] != nullptr
  std::atomic<bool> watch_active{false};
  std::atomic<double> last_check{0.0};
  alignas(64) std::array<std::atomic<void*>, slot_count> next_slots{};
};
HotState hot; // constant-initialized: usable before any constructor runs
auto& next_slots = hot.next_slots;

Recorder* connected() noexcept {
  return hot.recorder.load(std::memory_order_acquire);
}

/// Gives the event to the recorder connected: `record(recorder)`. Nothing
/// before connect (no front end connected cunumpy to Kokkos yet).
template <class Record> void feed(Record record) {
  if (Recorder* const recorder = connected())
    return record(*recorder);
}

/// Where `slot` forwards, with its bit in `chained` kept beside it (the
/// pointer is stored before the bit is set: a set bit always finds it).
void store_next(unsigned index, void* function) noexcept {
  const std::uint32_t bit = 1u << index;
  next_slots[index].store(function, std::memory_order_release);
  if (function != nullptr)
    hot.chained.fetch_or(bit, std::memory_order_release);
  else
    hot.chained.fetch_and(~bit, std::memory_order_release);
}
kokkosp::EventSet next_table{};

/// Slots being forwarded on this thread, and slots whose event a re-entered
/// call handled (see next_first): in the line of hot thread-locals.
std::uint32_t& forwarding() noexcept {
  return hot_thread_locals.forwarding;
}
std::uint32_t& handled() noexcept {
  return hot_thread_locals.handled;
}

/// A replaced entry of Kokkos' table, and what cunumpy did about it.
struct Replacement {
  Slot slot;
  void* by = nullptr;            ///< what Kokkos called instead
  void* previous_next = nullptr; ///< where the slot forwarded before
  std::uint32_t incident = 0;
  bool learned = false; ///< `by` forwards to cunumpy: left in front
};

struct Watch {
  /// Knows its holder: an exit from a signal handler that interrupted a
  /// check must not wait for it (verify).
  RecorderMutex mutex;
  TableAccess access;
  /// What cunumpy puts in Kokkos' table (its callbacks, or the plugin's
  /// entry points), and what must be there now (the same, or a tool found
  /// to forward to cunumpy).
  std::array<void*, slot_count> own{};
  std::array<void*, slot_count> expected{};
  /// Whether cunumpy's functions are the ones Kokkos calls (it can put
  /// them back), or another tool's that call cunumpy (it can only tell).
  bool repairable = true;
  std::vector<Replacement> replacements;
  std::uint32_t warned = 0; ///< slots already named on stderr
  bool paused_reported = false;
  // Whether it is active, and when it last looked: in `hot`.
};

Watch& the_watch() {
  static Watch* watch = new Watch(); // used until the process ends
  return *watch;
}

std::string describe_function(void* function) {
  if (function == nullptr)
    return "nothing (the callback was removed)";
  Dl_info info{};
  std::string text;
  if (::dladdr(function, &info) != 0) {
    text = info.dli_sname != nullptr ? info.dli_sname : "a function";
    if (info.dli_fname != nullptr)
      text += std::string(" in ") + info.dli_fname;
  } else {
    char address[32];
    std::snprintf(address, sizeof address, "%p", function);
    text = address;
  }
  return text;
}

std::string slot_list(const std::vector<Slot>& slots) {
  std::string text;
  for (Slot slot : slots)
    text += (text.empty() ? "" : ", ") + std::string(slot_name(slot));
  return text;
}

/// The next tool forwards the event of `slot` to cunumpy: it replaced
/// cunumpy's callback and kept cunumpy's as its own next. Leaves it in
/// front, forwards to the tool cunumpy forwarded to before, and retracts
/// the incident once each of its slots is known to forward. False when no
/// replacement explains the call.
bool chained_back(Slot slot) noexcept {
  try {
    Watch& watch = the_watch();
    std::lock_guard guard(watch.mutex);
    void* const current = next_slots[index_of(slot)].load();
    Replacement* found = nullptr;
    for (auto it = watch.replacements.rbegin(); it != watch.replacements.rend();
         ++it)
      if (it->slot == slot && !it->learned && it->by == current) {
        found = &*it;
        break;
      }
    if (found == nullptr)
      return false;
    found->learned = true;
    store_next(index_of(slot), found->previous_next);
    watch.expected[index_of(slot)] = found->by;
    kokkosp::EventSet live{};
    if (watch.access.get != nullptr && watch.access.get(live)) {
      set_field(live, slot, found->by);
      watch.access.set(live);
    }
    bool all_learned = true;
    for (const Replacement& other : watch.replacements)
      if (other.incident == found->incident && !other.learned)
        all_learned = false;
    Recorder* const recorder = connected();
    if (all_learned && recorder != nullptr) {
      const RecorderLock lock = recorder->lock();
      recorder->retract_incident(
          found->incident,
          "the replacing callback forwards to cunumpy's, so it was left in "
          "front and no event was lost",
          lock);
      warn("note: the tool that replaced cunumpy's " +
           std::string(slot_name(slot)) +
           " callback forwards every event to cunumpy; it stays in front, "
           "and no event was lost");
    }
    return true;
  } catch (...) {
    return false;
  }
}

/// Calls the next tool's callback of `slot`. True when that tool forwarded
/// the event back to cunumpy and a re-entered call handled it.
template <class Function, class... Args>
bool forward(Slot slot, const Args&... args) {
  const auto next = reinterpret_cast<Function>(
      next_slots[index_of(slot)].load(std::memory_order_relaxed));
  if (next == nullptr)
    return false;
  const std::uint32_t bit = 1u << index_of(slot);
  const std::uint32_t before = forwarding();
  forwarding() = before | bit;
  next(args...);
  forwarding() = before;
  if ((handled() & bit) == 0)
    return false;
  handled() &= ~bit;
  return true;
}

bool reentered(Slot slot) noexcept {
  return (forwarding() & (1u << index_of(slot))) != 0;
}

/// Whether the event of `slot` goes to cunumpy alone: no tool to forward
/// to, and no forwarding under way on this thread (the common case). The
/// callbacks then end with the recorder's call, which the compiler makes a
/// jump: their frame is not on the stack while the event is recorded (after
/// a time step that streams the caches, each 64 bytes of stack an event
/// writes is a miss).
bool alone(Slot slot) noexcept {
  return forwarding() == 0 && (hot.chained.load(std::memory_order_relaxed) &
                               (1u << index_of(slot))) == 0;
}

// The chained paths take the record and the arguments by value: a
// callback's alone case then takes no address of them, and the compiler
// spills nothing before it jumps to the recorder. (By reference, it spilled
// the arguments at the callback's entry, a stack frame for every event.)
// The records capture pointers and integers by value for the same reason.
template <class Function, class Record, class... Args>
__attribute__((noinline)) void next_first_chained(Slot slot, Record record,
                                                  Args... args);
template <class Function, class Record, class... Args>
__attribute__((noinline)) void cunumpy_first_chained(Slot slot, Record record,
                                                     Args... args);

/// A begin or a push: the next tool first, then the recorder.
template <class Function, class Record, class... Args>
void next_first(Slot slot, Record record, Args... args) {
  if (alone(slot))
    return feed(record);
  next_first_chained<Function>(slot, record, args...);
}

template <class Function, class Record, class... Args>
void next_first_chained(Slot slot, Record record, Args... args) {
  if (reentered(slot)) {
    if (!chained_back(slot))
      return; // the outer call records it
    forward<Function>(slot, args...);
    feed(record);
    handled() |= 1u << index_of(slot);
    return;
  }
  if (forward<Function>(slot, args...))
    return;
  feed(record);
}

/// An end, a pop or a point event: the recorder first, then the next tool.
template <class Function, class Record, class... Args>
void cunumpy_first(Slot slot, Record record, Args... args) {
  if (alone(slot))
    return feed(record);
  cunumpy_first_chained<Function>(slot, record, args...);
}

template <class Function, class Record, class... Args>
void cunumpy_first_chained(Slot slot, Record record, Args... args) {
  if (reentered(slot)) {
    if (chained_back(slot))
      forward<Function>(slot, args...);
    return; // the outer call recorded it
  }
  feed(record);
  forward<Function>(slot, args...);
}

/// Forwarded only.
template <class Function, class... Args>
void pass(Slot slot, const Args&... args) {
  if (!reentered(slot))
    forward<Function>(slot, args...);
}

/// How often region pushes and pops check Kokkos' table. A check reads the
/// whole table (1.7 KB; after a time step that streams more than the caches
/// it costs some 80 cache misses, 1-2 us), so once every 10 ms keeps it
/// under 0.02% of the run. A replacement found later loses more events to
/// the other tool, but the verdict is the same: every read of a counter,
/// budget or report checks first, and an unrepaired gap fails it.
/// (CUNUMPY_TABLE_CHECK_INTERVAL_S overrides it at build time, for
/// profiling under valgrind, where 10 ms is less than a time step.)
#ifndef CUNUMPY_TABLE_CHECK_INTERVAL_S
#define CUNUMPY_TABLE_CHECK_INTERVAL_S 10e-3
#endif
constexpr double check_interval_s = CUNUMPY_TABLE_CHECK_INTERVAL_S;

/// At region pushes and pops, at most once every check_interval_s.
void verify_now_and_then() noexcept {
  if (!hot.watch_active.load(std::memory_order_relaxed))
    return;
  Recorder* const recorder = connected();
  if (recorder == nullptr || !recorder->has_sinks())
    return;
  const double now = recorder->now();
  if (now - hot.last_check.load(std::memory_order_relaxed) < check_interval_s)
    return;
  hot.last_check.store(now, std::memory_order_relaxed);
  verify();
}

/// At the end of each copy, unlike the rest of the table: a copy made while
/// the region callbacks are missing from Kokkos' table counts outside the
/// region the program is in, and no push or pop comes to tell.
void verify_region_slots() noexcept {
  Recorder* const recorder = connected();
  if (!hot.watch_active.load(std::memory_order_relaxed) ||
      recorder == nullptr || !recorder->has_sinks())
    return;
  Watch& watch = the_watch();
  if (watch.mutex.held_by_this_thread())
    return;
  try {
    {
      std::lock_guard guard(watch.mutex);
      kokkosp::EventSet live; // get() writes all of it
      if (!watch.access.get(live))
        return;
      bool same = true;
      for (Slot slot : {Slot::push_region, Slot::pop_region})
        same = same && field(live, slot) == watch.expected[index_of(slot)];
      if (same)
        return;
    }
    verify();
  } catch (...) {
    recorder->losses().count(LossReason::record_failed);
  }
}

} // namespace

void* slot_entry(const kokkosp::EventSet& table, Slot slot) noexcept {
  return field(table, slot);
}

const char* slot_name(Slot slot) noexcept {
  switch (slot) {
#define CUNUMPY_TOOLS_NAME(name, type, entry)                                  \
  case Slot::name:                                                             \
    return #name;
    CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_NAME)
#undef CUNUMPY_TOOLS_NAME
  }
  return "?";
}

namespace callback {

void begin_parallel_for(const char* name, std::uint32_t device_id,
                        std::uint64_t* id) {
  next_first<kokkosp::BeginFunction>(
      Slot::begin_parallel_for,
      [name, device_id](Recorder& recorder) {
        record::begin_kernel(recorder, name, device_id);
      },
      name, device_id, id);
}
void end_parallel_for(std::uint64_t id) {
  cunumpy_first<kokkosp::EndFunction>(
      Slot::end_parallel_for,
      [](Recorder& recorder) { record::end_kernel(recorder); }, id);
}
void begin_parallel_reduce(const char* name, std::uint32_t device_id,
                           std::uint64_t* id) {
  next_first<kokkosp::BeginFunction>(
      Slot::begin_parallel_reduce,
      [name, device_id](Recorder& recorder) {
        record::begin_kernel(recorder, name, device_id);
      },
      name, device_id, id);
}
void end_parallel_reduce(std::uint64_t id) {
  cunumpy_first<kokkosp::EndFunction>(
      Slot::end_parallel_reduce,
      [](Recorder& recorder) { record::end_kernel(recorder); }, id);
}
void begin_parallel_scan(const char* name, std::uint32_t device_id,
                         std::uint64_t* id) {
  next_first<kokkosp::BeginFunction>(
      Slot::begin_parallel_scan,
      [name, device_id](Recorder& recorder) {
        record::begin_kernel(recorder, name, device_id);
      },
      name, device_id, id);
}
void end_parallel_scan(std::uint64_t id) {
  cunumpy_first<kokkosp::EndFunction>(
      Slot::end_parallel_scan,
      [](Recorder& recorder) { record::end_kernel(recorder); }, id);
}

void push_region(const char* name) {
  verify_now_and_then();
  if (alone(Slot::push_region)) {
    // Called, not jumped to as in the other callbacks: as a jump, a region's
    // push and pop cost 13% more in bench_plugin_events (57.1 against 50.3
    // ns, 10 rounds), for a reason not traced. The empty asm after the call
    // keeps it a call.
    feed([name](Recorder& recorder) { record::push_region(recorder, name); });
    asm volatile("" ::: "memory");
    return;
  }
  next_first_chained<kokkosp::PushFunction>(
      Slot::push_region,
      [name](Recorder& recorder) { record::push_region(recorder, name); },
      name);
}
void pop_region() {
  verify_now_and_then();
  cunumpy_first<kokkosp::PopFunction>(Slot::pop_region, [](Recorder& recorder) {
    record::pop_region(recorder);
  });
}

void allocate_data(kokkosp::SpaceHandle space, const char* label,
                   const void* ptr, std::uint64_t size) {
  allocate_data_by_reference(space, label, ptr, size);
}
/// allocate_data_by_reference and deallocate_data_by_reference when another
/// tool is chained or this thread is forwarding (as begin_deep_copy_chained).
template <class Function>
__attribute__((noinline)) static void
allocation_chained(Slot slot, const kokkosp::SpaceHandle& space,
                   const char* label, const void* ptr, std::uint64_t size,
                   bool freed) {
  cunumpy_first_chained<Function>(
      slot,
      [name = space.name, ptr, size, freed](Recorder& recorder) {
        record::allocation(recorder, name, ptr, size, freed);
      },
      space, label, ptr, size);
}
void allocate_data_by_reference(const kokkosp::SpaceHandle& space,
                                const char* label, const void* ptr,
                                std::uint64_t size) {
  if (alone(Slot::allocate_data))
    return feed([name = space.name, ptr, size](Recorder& recorder) {
      record::allocation(recorder, name, ptr, size, false);
    });
  return allocation_chained<kokkosp::AllocateDataFunction>(
      Slot::allocate_data, space, label, ptr, size, false);
}
void deallocate_data(kokkosp::SpaceHandle space, const char* label,
                     const void* ptr, std::uint64_t size) {
  deallocate_data_by_reference(space, label, ptr, size);
}
void deallocate_data_by_reference(const kokkosp::SpaceHandle& space,
                                  const char* label, const void* ptr,
                                  std::uint64_t size) {
  if (alone(Slot::deallocate_data))
    return feed([name = space.name, ptr, size](Recorder& recorder) {
      record::allocation(recorder, name, ptr, size, true);
    });
  return allocation_chained<kokkosp::DeallocateDataFunction>(
      Slot::deallocate_data, space, label, ptr, size, true);
}
void create_profile_section(const char* name, std::uint32_t* id) {
  pass<kokkosp::CreateProfileSectionFunction>(Slot::create_profile_section,
                                              name, id);
}
void start_profile_section(std::uint32_t id) {
  pass<kokkosp::StartProfileSectionFunction>(Slot::start_profile_section, id);
}
void stop_profile_section(std::uint32_t id) {
  pass<kokkosp::StopProfileSectionFunction>(Slot::stop_profile_section, id);
}
void destroy_profile_section(std::uint32_t id) {
  pass<kokkosp::DestroyProfileSectionFunction>(Slot::destroy_profile_section,
                                               id);
}
void profile_event(const char* name) {
  pass<kokkosp::ProfileEventFunction>(Slot::profile_event, name);
}

void begin_deep_copy(kokkosp::SpaceHandle dst, const char* dst_label,
                     const void* dst_ptr, kokkosp::SpaceHandle src,
                     const char* src_label, const void* src_ptr,
                     std::uint64_t size) {
  begin_deep_copy_by_reference(dst, dst_label, dst_ptr, src, src_label, src_ptr,
                               size);
}
/// begin_deep_copy_by_reference when another tool is chained, or this
/// thread is forwarding: apart, so that the alone case writes no frame.
__attribute__((noinline)) static void
begin_deep_copy_chained(const kokkosp::SpaceHandle& dst, const char* dst_label,
                        const void* dst_ptr, const kokkosp::SpaceHandle& src,
                        const char* src_label, const void* src_ptr,
                        std::uint64_t size) {
  next_first_chained<kokkosp::BeginDeepCopyFunction>(
      Slot::begin_deep_copy,
      [&](Recorder& recorder) {
        record::begin_deep_copy(recorder, dst.name, dst_label, dst_ptr,
                                src.name, src_label, src_ptr, size);
      },
      dst, dst_label, dst_ptr, src, src_label, src_ptr, size);
}
void begin_deep_copy_by_reference(const kokkosp::SpaceHandle& dst,
                                  const char* dst_label, const void* dst_ptr,
                                  const kokkosp::SpaceHandle& src,
                                  const char* src_label, const void* src_ptr,
                                  std::uint64_t size) {
  // Both calls are jumps: the copy's event path, the deepest of all (it
  // captures the call site), starts where this function's frame would be.
  if (alone(Slot::begin_deep_copy))
    return feed([dst_name = dst.name, dst_label, dst_ptr, src_name = src.name,
                 src_label, src_ptr, size](Recorder& recorder) {
      record::begin_deep_copy(recorder, dst_name, dst_label, dst_ptr, src_name,
                              src_label, src_ptr, size);
    });
  return begin_deep_copy_chained(dst, dst_label, dst_ptr, src, src_label,
                                 src_ptr, size);
}
void end_deep_copy() {
  cunumpy_first<kokkosp::EndDeepCopyFunction>(
      Slot::end_deep_copy,
      [](Recorder& recorder) { record::end_deep_copy(recorder); });
  verify_region_slots();
}
void begin_fence(const char* name, std::uint32_t device_id,
                 std::uint64_t* handle) {
  // The handle is the next tool's; cunumpy keeps a stack per thread.
  next_first<kokkosp::BeginFenceFunction>(
      Slot::begin_fence,
      [name, device_id](Recorder& recorder) {
        record::begin_fence(recorder, name, device_id);
      },
      name, device_id, handle);
}
void end_fence(std::uint64_t handle) {
  cunumpy_first<kokkosp::EndFenceFunction>(
      Slot::end_fence, [](Recorder& recorder) { record::end_fence(recorder); },
      handle);
}
void sync_dual_view(const char* label, const void* ptr, bool to_device) {
  cunumpy_first<kokkosp::DualViewSyncFunction>(
      Slot::sync_dual_view,
      [label, ptr, to_device](Recorder& recorder) {
        record::dual_view_sync(recorder, label, ptr, to_device);
      },
      label, ptr, to_device);
}
void modify_dual_view(const char* label, const void* ptr, bool on_device) {
  cunumpy_first<kokkosp::DualViewModifyFunction>(
      Slot::modify_dual_view,
      [label, ptr, on_device](Recorder& recorder) {
        record::dual_view_modify(recorder, label, ptr, on_device);
      },
      label, ptr, on_device);
}

} // namespace callback

kokkosp::EventSet own_callbacks() noexcept {
  kokkosp::EventSet table{};
#define CUNUMPY_TOOLS_OWN(name, type, entry) table.name = &callback::name;
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_OWN)
#undef CUNUMPY_TOOLS_OWN
  return table;
}

bool records_slot(Slot slot) noexcept {
  switch (slot) {
  case Slot::create_profile_section:
  case Slot::start_profile_section:
  case Slot::stop_profile_section:
  case Slot::destroy_profile_section:
  case Slot::profile_event:
    return false;
  default:
    return true;
  }
}

bool counts_slot(Slot slot) noexcept {
  switch (slot) {
  case Slot::begin_deep_copy:
  case Slot::end_deep_copy:
  case Slot::begin_fence:
  case Slot::end_fence:
  case Slot::push_region:
  case Slot::pop_region:
  case Slot::sync_dual_view:
  case Slot::modify_dual_view:
    return true;
  default:
    return false;
  }
}

bool feeds_advice_only(Slot slot) noexcept {
  return slot == Slot::allocate_data || slot == Slot::deallocate_data;
}

void set_next(const kokkosp::EventSet& next) noexcept {
  next_table = next;
  for (unsigned i = 0; i < slot_count; ++i)
    store_next(i, field(next, static_cast<Slot>(i)));
}

const kokkosp::EventSet& next() noexcept {
  return next_table;
}

kokkosp::EventSet library_callbacks(void* handle) noexcept {
  kokkosp::EventSet table{};
  const auto lookup = [&](const char* name, auto& function) {
    void* symbol = ::dlsym(handle, name);
    function =
        reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
  };
#define CUNUMPY_TOOLS_LOOKUP(name, type, entry) lookup(#entry, table.name);
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_LOOKUP)
  CUNUMPY_TOOLS_LIFECYCLE_SLOTS(CUNUMPY_TOOLS_LOOKUP)
#undef CUNUMPY_TOOLS_LOOKUP
  return table;
}

void watch(TableAccess access, const kokkosp::EventSet& entries,
           bool repairable) {
  Watch& state = the_watch();
  {
    std::lock_guard guard(state.mutex);
    state.access = access;
    state.repairable = repairable;
    for (unsigned i = 0; i < slot_count; ++i) {
      state.own[i] = field(entries, static_cast<Slot>(i));
      state.expected[i] = state.own[i];
    }
  }
  hot.watch_active.store(access.get != nullptr, std::memory_order_release);
  if (Recorder* const recorder = connected())
    recorder->set_read_check(&verify);
}

bool watching() noexcept {
  return hot.watch_active.load(std::memory_order_acquire);
}

void lock_for_fork() noexcept {
  the_watch().mutex.lock();
}
void unlock_after_fork() noexcept {
  the_watch().mutex.unlock();
}

void verify() noexcept {
  Recorder* const connected_recorder = connected();
  if (!hot.watch_active.load(std::memory_order_acquire) ||
      connected_recorder == nullptr)
    return;
  Recorder& recorder = *connected_recorder;
  Watch& watch = the_watch();
  if (watch.mutex.held_by_this_thread())
    return; // from a signal handler that interrupted a check: never waits
  try {
    std::lock_guard guard(watch.mutex);
    kokkosp::EventSet live; // get() writes all of it
    if (!watch.access.get(live))
      return;
    bool any_set = false;
    for (unsigned i = 0; i < slot_count; ++i)
      if (watch.expected[i] != nullptr &&
          field(live, static_cast<Slot>(i)) != nullptr)
        any_set = true;
    // Kokkos calls no tool at all: Kokkos finalized (it pauses its tools
    // then), or, while it runs, someone paused its tools or cleared every
    // callback: what happens meanwhile reaches no tool. Said once; putting
    // them back does not bring back what was missed.
    if (!any_set) {
      if ((watch.access.running == nullptr || watch.access.running()) &&
          !watch.paused_reported) {
        watch.paused_reported = true;
        const std::string text =
            "Kokkos' tools were turned off while Kokkos ran (every callback "
            "of its table is empty: Kokkos::Tools::Experimental::pause_tools, "
            "or a library that cleared them), so what the program did "
            "meanwhile did not reach cunumpy";
        warn(text);
        const RecorderLock lock = recorder.lock();
        recorder.open_incident(text, lock);
      }
      return;
    }
    std::vector<Slot> replaced;
    std::vector<void*> by;
    for (unsigned i = 0; i < slot_count; ++i) {
      const auto slot = static_cast<Slot>(i);
      void* const expected = watch.expected[i];
      if (expected == nullptr)
        continue;
      void* const current = field(live, slot);
      if (current == expected)
        continue;
      replaced.push_back(slot);
      by.push_back(current);
      if (watch.repairable) {
        // cunumpy's own entry goes back in front of the new callback.
        watch.replacements.push_back(
            {slot, current, next_slots[i].load(), 0, false});
        store_next(i, current);
        set_field(live, slot, watch.own[i]);
        watch.expected[i] = watch.own[i];
      } else {
        // Kokkos calls cunumpy through another tool: cunumpy cannot put
        // itself back; it takes the new entry as the one to watch.
        watch.expected[i] = current;
      }
    }
    if (replaced.empty())
      return;
    if (watch.repairable)
      watch.access.set(live);

    std::string tools;
    for (std::size_t i = 0; i < replaced.size(); ++i) {
      const std::string one = describe_function(by[i]);
      if (tools.find(one) == std::string::npos)
        tools += (tools.empty() ? "" : "; ") + one;
    }
    const std::string what =
        "another tool replaced cunumpy's Kokkos Tools callback(s) " +
        slot_list(replaced) + " (with " + tools + ")";
    const std::string text =
        what + (watch.repairable
                    ? "; cunumpy put itself back in front and forwards to it, "
                      "but what Kokkos reported in between went to that tool "
                      "only"
                    : "; Kokkos calls cunumpy through another tool, so "
                      "cunumpy cannot put itself back, and events of those "
                      "callbacks no longer reach it");
    std::uint32_t incident = 0;
    {
      const RecorderLock lock = recorder.lock();
      incident = recorder.open_incident(text, lock);
    }
    for (Replacement& replacement : watch.replacements)
      if (replacement.incident == 0)
        replacement.incident = incident;
    std::uint32_t fresh = 0;
    for (Slot slot : replaced)
      fresh |= (1u << index_of(slot)) & ~watch.warned;
    if (fresh != 0) {
      watch.warned |= fresh;
      warn(text + "; counts, budgets and reports of this run say that "
                  "events may have been lost");
    }
  } catch (...) {
    recorder.losses().count(LossReason::record_failed);
  }
}

void connect(Recorder& recorder) noexcept {
  hot.recorder.store(&recorder, std::memory_order_release);
}

} // namespace cunumpy::Impl::tools
