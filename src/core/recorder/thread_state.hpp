#ifndef CUNUMPY_SRC_RECORDER_THREAD_STATE_HPP
#define CUNUMPY_SRC_RECORDER_THREAD_STATE_HPP

// What the recorder keeps per thread: the copies and fences in flight, the
// regions open on it, and the caches that find the ids of an event without
// the recorder's mutex. Reached through an initial-exec TLS
// pointer (thread_state()); only its thread touches it, except its regions.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/space_names.hpp>

#include "call_sites/call_sites.hpp"
#include "call_sites/stack_capture.hpp"
#include "recorder/region_tree.hpp"
#include "recorder/spaces.hpp"
#include "support/fast_thread_local.hpp"

namespace cunumpy::Impl {

class Recorder;

constexpr int max_frames = 64;

/// The size of a Kokkos SpaceHandle's name.
constexpr std::size_t space_name_size = 64;

/// The site ids of a thread's recent stacks, so that an event made again
/// from the same line finds its id without the recorder's mutex: a few
/// stacks of up to 16 frames, compared frame by frame.
class SiteCache {
public:
  bool find(void* const* frames, int count, std::uint32_t& site) const;
  void store(void* const* frames, int count, std::uint32_t site);

private:
  static constexpr int max_frames = 16;
  static constexpr int size = 8;
  struct Entry {
    int count = 0;
    std::uint32_t site = 0; // 0: empty
    void* frames[max_frames];
  };
  static std::size_t slot(void* const* frames, int count);
  Entry entries_[size];
};

/// Strings a thread names its events with again and again (region names,
/// DualView labels, fence names, kernel names, the labels of the views it
/// copies) and their ids, so that a loop interns nothing: `Size` of them.
/// A search tries the string found last, then the one found after it the
/// last time: a loop that names its events in the same order each time
/// finds each in one or two comparisons (one or two cache lines).
/// Otherwise a hash of the string gives its slot. A new string replaces one not
/// found since the replacing hand last passed it, never the one found last (the
/// clock algorithm: close to "the one unused the longest", for a flag set
/// when a search moves on to another string).
template <unsigned Size> class RecentStrings {
  static_assert(Size >= 2 && (Size & (Size - 1)) == 0, "a power of two");

public:
  bool find(std::string_view text, std::uint32_t& id) {
    const Entry& last = entries_[last_];
    if (last.used && last.text == text) {
      id = last.id;
      return true;
    }
    return find_other(text, id);
  }
  /// A terminated string (Kokkos' labels), compared without measuring it
  /// while the guesses hold.
  bool find(const char* text, std::uint32_t& id) {
    const Entry& last = entries_[last_];
    if (last.used && same(last.text.c_str(), text)) {
      id = last.id;
      return true;
    }
    return find_other(std::string_view(text), id);
  }
  /// strcmp(a, b) == 0, inline: a label is a few characters, and a call of
  /// strcmp through the PLT cost 6% of a copy event.
  static bool same(const char* a, const char* b) noexcept {
    while (*a != '\0' && *a == *b) {
      ++a;
      ++b;
    }
    return *a == *b;
  }
  void store(std::string_view text, std::uint32_t id) {
    unsigned slot = hand_;
    for (;;) {
      Entry& entry = entries_[slot];
      if (slot != last_ || !entry.used) {
        if (!entry.used || !entry.found)
          break;
        entry.found = false; // a second chance
      }
      slot = (slot + 1) % Size;
    }
    hand_ = (slot + 1) % Size;
    Entry& entry = entries_[slot];
    if (entry.used && index_[entry.bucket] == slot + 1)
      index_[entry.bucket] = 0;
    entry.text.assign(text);
    entry.id = id;
    entry.used = true;
    entry.bucket = bucket(text);
    index_[entry.bucket] = static_cast<std::uint8_t>(slot + 1);
    move_last(slot);
  }

private:
  static constexpr unsigned buckets = 4 * Size;
  static_assert(Size < 256, "slots are bytes");

  static std::uint8_t bucket(std::string_view text) {
    return static_cast<std::uint8_t>(std::hash<std::string_view>{}(text) %
                                     buckets);
  }
  __attribute__((noinline)) bool find_other(std::string_view text,
                                            std::uint32_t& id) {
    unsigned slot = entries_[last_].next;
    if (!entries_[slot].used || entries_[slot].text != text) {
      const unsigned indexed = index_[bucket(text)];
      if (indexed == 0)
        return false;
      slot = indexed - 1;
      if (entries_[slot].text != text)
        return false; // another string of the same bucket
    }
    move_last(slot);
    id = entries_[slot].id;
    return true;
  }
  /// The string found last is used until another one is: only then is it
  /// marked found, so that finding it again writes nothing.
  void move_last(unsigned slot) {
    Entry& left = entries_[last_];
    left.found = true;
    left.next = static_cast<std::uint8_t>(slot);
    entries_[slot].found = true;
    last_ = slot;
  }

  struct Entry {
    std::string text;
    std::uint32_t id = 0;
    bool used = false;  // the empty string's id is 0 too
    bool found = false; // since the hand last passed it
    std::uint8_t bucket = 0;
    std::uint8_t next = 0; // the slot found after this one, the last time
  };
  // First: a search reads last_, then an entry; the index comes last.
  unsigned last_ = 0;
  unsigned hand_ = 0;
  Entry entries_[Size];
  std::uint8_t index_[buckets] = {}; // slot + 1 by bucket; 0: none
};

/// Where an event came from, captured on the event's thread without the
/// recorder's mutex and interned later with it.
/// What a capture writes and a loop's replay reads comes first, frames[0]
/// included: an event made again from the same line touches two cache
/// lines of it, not the far end of the frames.
struct CapturedSite {
  ApiScope* api = nullptr;
  WalkMemo memo; // the site id kept with a walk the unwinder replays
  /// The site id the memo held when captured: then only frames[0] was
  /// written (see WalkMemo).
  std::uint32_t memo_site = 0;
  int frame_count = 0;
  bool have_fallback = false;
  int fallback_line = 0;
  void* frames[max_frames];
  std::string fallback_file;
  std::string fallback_function;

  void capture(const Recorder& recorder);
  bool from_api() const { return api != nullptr && !api->file().empty(); }
  /// The site id when this thread knows it already (no mutex needed).
  bool cached(const SiteCache& cache, std::uint32_t& id) const;
  /// The site id, interned.
  std::uint32_t intern(Recorder& recorder, SiteCache& cache,
                       const RecorderLock& lock) const;
};

struct InFlightCopy {
  bool transfer = false;
  /// Its begin was recorded whole: a process that ends before its end
  /// (exit from a signal handler) counts it (record::end_copies_in_flight).
  bool begun = false;
  bool scalar = false;
  bool saw_fence = false;
  bool has_recorded_child = false;
  EventKind kind = EventKind::to_host;
  std::uint64_t nbytes = 0;
  std::uint32_t src_space = 0;
  std::uint32_t dst_space = 0;
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  /// Contents hashed for advice (recorder/contents.hpp): the host side may
  /// be read, and a copy to the host's destination before the copy.
  bool hash_contents = false;
  /// The source of late events (its RawEvent::origin) that saw copies made
  /// inside this copy (the CUDA view: CUDA's), and the token it gave it
  /// (0: none did): then its event waits for that source's record of them
  /// (EventSource::hold). In the padding before content_before: the copy's
  /// state does not grow.
  std::uint8_t held_by = 0;
  std::uint32_t held_token = 0;
  std::uint64_t content_before = 0;
  double start = 0.0;
  bool label_known = false; ///< label_id is the label's StringTable id
  std::uint32_t label_id = 0;
  std::string label; ///< set when the id is not known yet
  Place place;       ///< where the copy began
  CapturedSite site;
};

/// The steps of Kokkos' making of a device view, as its events show them:
/// the allocation (allocate_data), the copy of its header (a CUDA copy),
/// fences, its initialization kernel, and the fence after that kernel.
/// Any other event of the thread (a deep copy, a region, a second kernel)
/// ends it.
enum class AllocationStep : std::uint8_t {
  none,
  allocated,    ///< its header copy may come next
  header,       ///< header written (or a fence came first)
  initializing, ///< inside its initialization kernel
  initialized,  ///< until the fence after that kernel
};

/// The host result of a device kernel (a parallel_reduce or parallel_scan
/// into a host value): Kokkos copies it to the host, a to_host of the
/// program's (docs/counting.md).
enum class LaunchResult : std::uint8_t {
  none,      ///< no device kernel, or its result was counted
  uncounted, ///< a device kernel began: a result read would be counted
};

struct InFlightFence {
  bool recorded = false;
  /// Kokkos fences to read a device kernel's result on the host.
  bool reads_result = false;
  bool in_allocation = false; ///< a fence of a view's making
  bool global = false;
  std::uint32_t space_type = 0; ///< Kokkos 4's execution space type
  double start = 0.0;
  Place place; ///< where the fence began
  std::string name;
  CapturedSite site;
};

struct InFlightKernel {
  std::string name;
  double start = 0.0;
};

struct SpaceCacheEntry {
  char name[space_name_size] = {}; // zero-padded
  SpaceSide side = SpaceSide::host;
  bool unknown = false; // a host space only because its name is unknown
  std::uint32_t id = 0;
  std::uint64_t generation = ~std::uint64_t(0);
};

struct ThreadState;

/// The spaces of a thread's last copy, as Kokkos passed their names: a
/// loop copies between the same two, and comparing the names is cheaper
/// than two lookups. What a loop's copy reads is one cache line: the
/// result, and the first 16 bytes of both names, which hold a short name
/// ("HostSpace", "Cuda") whole; the rest of the names only for longer ones.
struct alignas(64) LastSpaces {
  std::uint64_t generation = ~std::uint64_t(0);
  std::uint32_t dst_id = 0;
  std::uint32_t src_id = 0;
  SpaceSide dst_side = SpaceSide::host;
  SpaceSide src_side = SpaceSide::host;
  bool dst_short = false; // terminated within its first 16 bytes
  bool src_short = false;
  /// Host to host only because a name is unknown: see SpaceRegistry::is_known.
  bool unknown_host_pair = false;
  static constexpr std::size_t head_size = 16;
  char dst_head[head_size] = {};
  char src_head[head_size] = {};
  char dst_tail[space_name_size - head_size] = {};
  char src_tail[space_name_size - head_size] = {};

  /// The sides and ids of the two spaces; inline, since every copy asks and
  /// a loop's copies hit the last pair. `space_generation`: the thread's
  /// recorder's SpaceRegistry::generation.
  void classify(const char* dst_name, const char* src_name, ThreadState& thread,
                std::uint64_t space_generation, SpaceSide& dst_side_out,
                std::uint32_t& dst_id_out, SpaceSide& src_side_out,
                std::uint32_t& src_id_out) {
    if (generation != space_generation ||
        !same_name(dst_head, dst_tail, dst_short, dst_name) ||
        !same_name(src_head, src_tail, src_short, src_name))
      reclassify(dst_name, src_name, thread, space_generation);
    dst_side_out = dst_side;
    dst_id_out = dst_id;
    src_side_out = src_side;
    src_id_out = src_id;
  }

private:
  /// Whether `name` is the kept one (a name that ends within its head when
  /// `short_name`): equal bytes up to the end of the kept name. Bytes that
  /// differ after a terminator (Kokkos pads with zeros) only cost a lookup.
  static bool same_name(const char* head, const char* tail, bool short_name,
                        const char* name) {
    std::uint64_t difference = 0;
    for (std::size_t i = 0; i < head_size; i += 8)
      difference |= word(head + i) ^ word(name + i);
    if (!short_name)
      for (std::size_t i = 0; i < space_name_size - head_size; i += 8)
        difference |= word(tail + i) ^ word(name + head_size + i);
    return difference == 0;
  }
  static std::uint64_t word(const char* bytes) {
    std::uint64_t x = 0;
    std::memcpy(&x, bytes, 8);
    return x;
  }
  /// A pair other than the last one: looked up and kept.
  void reclassify(const char* dst_name, const char* src_name,
                  ThreadState& thread, std::uint64_t space_generation);
};

struct LastCopy {
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;
  EventKind kind = EventKind::to_host;
  bool valid = false;
};

/// The descriptions of a thread's recent raw copies ("deep_copy(\"x\",
/// nbytes=8)") by label, size and kind, replaced in turn.
class DescriptionCache {
public:
  bool find(const InFlightCopy& copy, std::uint32_t& id) const {
    for (const Entry& entry : entries_) {
      if (entry.id != 0 && entry.label == copy.label_id &&
          entry.nbytes == copy.nbytes && entry.scalar == copy.scalar) {
        id = entry.id;
        return true;
      }
    }
    return false;
  }
  void store(const InFlightCopy& copy, std::uint32_t id) {
    entries_[next_++ % size] = {copy.label_id, copy.nbytes, copy.scalar, id};
  }

private:
  static constexpr unsigned size = 4;
  struct Entry {
    std::uint32_t label = 0;
    std::uint64_t nbytes = 0;
    bool scalar = false;
    std::uint32_t id = 0; // 0: empty
  };
  Entry entries_[size];
  unsigned next_ = 0;
};

/// Laid out by use: the lines every copy reads or writes first, each
/// aligned to a line (after a time step that streams more than the caches,
/// each line an event reads is a miss), then what a loop finds in its first
/// entries (descriptions, names, sites), then what only new names and
/// spaces need.
struct alignas(64) ThreadState {
  // Elements are reused (depth counters, never shrinking) so that strings
  // and frames keep their storage: recording allocates nothing once warm.
  std::vector<InFlightCopy> copies;
  std::size_t copy_depth = 0;
  /// Begins that could not be recorded: their ends are expected.
  std::size_t failed_copy_begins = 0;
  std::vector<InFlightFence> fences;
  std::size_t fence_depth = 0;
  std::size_t failed_fence_begins = 0;
  std::vector<InFlightKernel> kernels;
  std::size_t kernel_depth = 0;
  /// What Kokkos is doing on this thread (docs/cuda.md). `device_launch`:
  /// a kernel of a device execution space is being launched (between its
  /// begin and end, with no other Kokkos event of the thread since its
  /// begin but fences and allocations: a launch whose end never came is
  /// closed by the thread's next region, copy or kernel). Host-to-device
  /// CUDA copies and CUDA waits there are Kokkos' own; a copy to the host
  /// there is the reduction's result, the program's. `allocation_step`:
  /// where Kokkos is in making a device view; the copy of its header (128
  /// bytes, host to device, to `allocation` itself) is Kokkos' own, and the
  /// fences of a view's making are its allocation's (advice).
  bool device_launch = false;
  AllocationStep allocation_step = AllocationStep::none;
  /// The result of the last device kernel begun on this thread (a
  /// reduction or scan into host memory): whether it was counted yet.
  LaunchResult launch_result = LaunchResult::none;
  /// cunumpy's own fence of debug-sync mode is running: its fence events
  /// are the wait cunumpy records itself.
  bool in_debug_fence = false;
  std::uint32_t index;
  std::uint64_t fence_count = 0;
  /// The recorder the thread takes part in, from its first event there
  /// (join); null before, and once that recorder ended (leave).
  Recorder* recorder = nullptr;

  alignas(64) LastCopy last_copy; // 32 bytes
  /// The regions and explicit phases open on this thread, innermost last:
  /// written by this thread with the recorder's mutex held, read by it
  /// without (Recorder::place) and by others with the mutex.
  std::vector<OpenRegion> regions;
  /// Counted among the threads with regions open (with the mutex).
  bool counted_in_regions = false;
  // Activity on this thread (copies and fences begun), to merge the fences
  // one Kokkos::fence reports for each execution space into one sync.
  std::uint64_t activity = 0;
  std::uint64_t global_fence_activity = 0;
  /// The labels of the views this thread copies from, and their ids: its
  /// search starts in the line above, its first entry fills the next one
  /// (a copy from the view copied last touches those two lines).
  RecentStrings<4> copy_labels;
  std::uint32_t global_fence_name_id = 0;
  /// The execution space types whose part of the current global fence came
  /// already: a second part of one type is the next Kokkos::fence.
  std::uint64_t global_fence_types = 0;

  LastSpaces last_spaces; // aligned to a line
  DescriptionCache descriptions;
  /// Of fences, regions, DualViews and kernels: 32, as a time step of a
  /// real code names tens of regions and kernels.
  RecentStrings<32> names;
  SiteCache sites;

  SpaceCacheEntry spaces[8];
  unsigned next_space = 0;
  // Unknown spaces (by name id) this thread told the registry of.
  std::uint32_t noted_unknown[4] = {};
  /// The device allocation Kokkos reported last on this thread (whose
  /// header it may copy next), and the last device kernel's name.
  const void* allocation = nullptr;
  std::string device_kernel;

  /// The thread's states in the other recorders it recorded in (a test's
  /// second recorder, say), each joined to one: a chain from the thread's
  /// first state, owned by it.
  std::unique_ptr<ThreadState> next;
  /// This state's recorder ended (leave): it joins none again.
  bool left = false;

  ThreadState();
  /// A state for another recorder of the thread of index `index`.
  explicit ThreadState(std::uint32_t index);
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
  ~ThreadState();
  /// Takes part in `recorder` (Recorder::add_thread) until the thread ends.
  void join(Recorder& recorder);
  /// The thread's state in `recorder`, made and joined at its first event
  /// there (thread_state(recorder) calls it when this one is not it).
  ThreadState& in(Recorder& recorder);
  /// The thread's state in `recorder`, or null before its first event there.
  ThreadState* find(const Recorder& recorder) noexcept;
  /// `recorder` ends: the thread's state in it leaves it.
  void leave(Recorder& recorder) noexcept;

  /// Tells the registry of an unknown space in a host-to-host pair, once
  /// per space and thread (a loop that alternates pairs takes no lock).
  void note_unknown_space(std::uint32_t id, const char* name);

  InFlightCopy& push_copy() {
    if (copy_depth == copies.size())
      copies.emplace_back();
    return copies[copy_depth++];
  }
  InFlightFence& push_fence() {
    if (fence_depth == fences.size())
      fences.emplace_back();
    return fences[fence_depth++];
  }
  InFlightKernel& push_kernel() {
    if (kernel_depth == kernels.size())
      kernels.emplace_back();
    return kernels[kernel_depth++];
  }
};

/// The calling thread's first state, whether it recorded yet or not (its
/// index).
inline ThreadState& thread_state() {
  return FastThreadLocal<ThreadState, &HotThreadLocals::thread_state>::get();
}
/// The calling thread's state if it has one (none before its first event,
/// nor once the thread's end deleted it).
inline ThreadState* existing_thread_state() noexcept {
  return FastThreadLocal<ThreadState, &HotThreadLocals::thread_state>::find();
}
/// The calling thread's state in `recorder`, taking part in it from its
/// first event on (a few instructions once made, for the recorder the
/// thread recorded in first).
inline ThreadState& thread_state(Recorder& recorder) {
  ThreadState& thread = thread_state();
  if (__builtin_expect(thread.recorder == &recorder, 1))
    return thread;
  return thread.in(recorder);
}

/// The side and interned name of a memory space, cached per thread and
/// invalidated when the set of device spaces changes.
void classify_space(const char* name, ThreadState& thread, SpaceSide& side,
                    std::uint32_t& id, bool& unknown);

/// The id of a name the thread uses often (a region, a fence, a DualView, a
/// kernel), interned under the mutex the first time.
std::uint32_t recent_name_id(Recorder& recorder, ThreadState& thread,
                             std::string_view name);
/// The same for a terminated name (Kokkos'), not measured while the thread's
/// guess holds.
std::uint32_t recent_name_id(Recorder& recorder, ThreadState& thread,
                             const char* name);

} // namespace cunumpy::Impl

#endif
