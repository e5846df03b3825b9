#include "recorder/recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CUNUMPY_HAVE_TSC 1
#endif

#include <cunumpy/impl/recorder.hpp>

#ifndef CUNUMPY_KOKKOS_VERSION
#error "src/CMakeLists.txt defines CUNUMPY_KOKKOS_VERSION for this file"
#endif
#include <cunumpy/space_names.hpp>

#include "support/environment.hpp"
#include "support/fast_thread_local.hpp"
#include "call_sites/stack_capture.hpp"

namespace cunumpy::Impl {
namespace {

constexpr int max_frames = 64;
constexpr int default_backtrace_depth = 32;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// The site ids of a thread's recent stacks, so that an event made again
/// from the same line finds its id without the recorder's mutex: a few
/// stacks of up to 16 frames, compared frame by frame.
class SiteCache {
public:
  bool find(void* const* frames, int count, std::uint32_t& site) const {
    if (count > max_frames)
      return false;
    const Entry& entry = entries_[slot(frames, count)];
    if (entry.site == 0 || entry.count != count ||
        !std::equal(frames, frames + count, entry.frames))
      return false;
    site = entry.site;
    return true;
  }

  void store(void* const* frames, int count, std::uint32_t site) {
    if (count > max_frames)
      return;
    Entry& entry = entries_[slot(frames, count)];
    entry.count = count;
    entry.site = site;
    std::copy(frames, frames + count, entry.frames);
  }

private:
  static constexpr int max_frames = 16;
  static constexpr int size = 8;
  struct Entry {
    int count = 0;
    std::uint32_t site = 0; // 0: empty
    void* frames[max_frames];
  };

  static std::size_t slot(void* const* frames, int count) {
    std::uint64_t hash = std::uint64_t(count);
    for (int i = 0; i < count; ++i)
      hash = (hash ^ reinterpret_cast<std::uintptr_t>(frames[i])) *
             0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>(hash >> 61) % size;
  }

  Entry entries_[size];
};

/// Strings a thread names its events with again and again (region names,
/// DualView labels, fence names) and their ids, so that a loop interns
/// nothing: the last few, replaced in turn.
class RecentStrings {
public:
  bool find(std::string_view text, std::uint32_t& id) const {
    for (const Entry& entry : entries_) {
      if (entry.id != 0 && entry.text == text) {
        id = entry.id;
        return true;
      }
    }
    return false;
  }

  void store(std::string_view text, std::uint32_t id) {
    Entry& entry = entries_[next_++ % size];
    entry.text.assign(text);
    entry.id = id;
  }

private:
  static constexpr unsigned size = 8;
  struct Entry {
    std::string text;
    std::uint32_t id = 0; // 0: empty
  };
  Entry entries_[size];
  unsigned next_ = 0;
};

/// Where an event came from, captured on the event's thread without the
/// recorder's mutex and interned later with it.
struct CapturedSite {
  ApiScope* api = nullptr;
  int frame_count = 0;
  void* frames[max_frames];
  WalkMemo memo; // the site id kept with a walk the unwinder replays
  /// The site id the memo held when captured: then only frames[0] was
  /// written (see WalkMemo).
  std::uint32_t memo_site = 0;
  bool have_fallback = false;
  std::string fallback_file;
  std::string fallback_function;
  int fallback_line = 0;

  void capture(const Recorder& recorder) {
    api = ApiScope::current();
    frame_count = 0;
    memo_site = 0;
    have_fallback = false;
    if (api != nullptr && !api->file().empty())
      return;
    const int depth = recorder.backtrace_depth();
    const auto provider = recorder.site_provider();
    // With a provider, equal frames may still be different sites (another
    // Python line through the same interpreter frames): no memo.
    WalkMemo* const kept = provider == nullptr ? &memo : nullptr;
    memo = WalkMemo();
    if (depth > 0)
      frame_count =
          capture_stack(frames, std::min(depth, max_frames), {}, kept);
    memo_site = memo.get();
    if (provider != nullptr)
      have_fallback = provider(fallback_file, fallback_line, fallback_function);
  }

  bool from_api() const { return api != nullptr && !api->file().empty(); }

  /// The site id when this thread knows it already (no mutex needed).
  bool cached(const SiteCache& cache, std::uint32_t& id) const {
    if (from_api()) {
      id = api->site_id; // the scope is this thread's
      return id != 0;
    }
    if (have_fallback)
      return false;
    if (frame_count == 0) {
      id = 0; // no call site
      return true;
    }
    // A replayed walk: the frames of the first time, and its site.
    id = memo_site;
    if (id != 0)
      return true;
    if (!cache.find(frames, frame_count, id))
      return false;
    memo.set(id);
    return true;
  }

  /// The site id; needs the recorder's mutex.
  std::uint32_t intern(Recorder& recorder, SiteCache& cache) const {
    SiteTable& sites = recorder.sites();
    if (from_api()) {
      if (api->site_id == 0)
        api->site_id = sites.known(api->file(), api->line(), api->function());
      return api->site_id;
    }
    if (memo_site != 0 && !have_fallback)
      return memo_site;
    const std::uint32_t fallback =
        have_fallback
            ? sites.known(fallback_file, fallback_line, fallback_function)
            : 0;
    const std::uint32_t id = sites.stack(frames, frame_count, fallback);
    if (!have_fallback) {
      cache.store(frames, frame_count, id);
      memo.set(id);
    }
    return id;
  }
};

struct InFlightCopy {
  bool transfer = false;
  bool scalar = false;
  bool saw_fence = false;
  bool has_recorded_child = false;
  EventKind kind = EventKind::to_host;
  std::uint64_t nbytes = 0;
  std::uint32_t src_space = 0;
  std::uint32_t dst_space = 0;
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  std::string label;          ///< set when label_id is 0
  std::uint32_t label_id = 0; ///< StringTable id, when already known
  CapturedSite site;
  double start = 0.0;
};

struct InFlightFence {
  bool recorded = false;
  bool global = false;
  std::string name;
  CapturedSite site;
  double start = 0.0;
};

/// The size of a Kokkos SpaceHandle's name.
constexpr std::size_t space_name_size = 64;

struct SpaceCacheEntry {
  char name[space_name_size] = {}; // zero-padded
  SpaceSide side = SpaceSide::host;
  bool unknown = false; // a host space only because its name is unknown
  std::uint32_t id = 0;
  std::uint64_t generation = ~std::uint64_t(0);
};

/// Whether a space name as Kokkos passes it (64 readable bytes, terminated
/// unless 64 characters long) is `cached`'s, compared 8 bytes at a time up
/// to the cached name's terminator: a few instructions where strncmp takes
/// a call and a loop.
bool same_space_name(const char (&cached)[space_name_size], const char* name) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (std::size_t i = 0; i < space_name_size; i += 8) {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::memcpy(&a, cached + i, 8);
    std::memcpy(&b, name + i, 8);
    // The lowest set bit marks the first zero byte of `a`.
    const std::uint64_t zeros =
        (a - 0x0101010101010101ull) & ~a & 0x8080808080808080ull;
    if (zeros == 0) {
      if (a != b)
        return false;
      continue;
    }
    const unsigned bytes = unsigned(__builtin_ctzll(zeros)) / 8 + 1;
    const std::uint64_t mask = bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
    return ((a ^ b) & mask) == 0;
  }
  return true;
#else
  return std::strncmp(cached, name, space_name_size) == 0;
#endif
}

struct LastCopy {
  bool valid = false;
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  EventKind kind = EventKind::to_host;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;
};

std::atomic<std::uint32_t> next_thread_index{0};

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

} // namespace

/// Records of one thread, waiting for a flush. Its thread appends without a
/// lock; the flushing thread, holding the recorder's mutex, reads what the
/// head published and then moves the tail: one writer for each counter.
class Recorder::Queue {
public:
  /// 8 KiB a thread: a few time steps of events between flushes, and little
  /// memory for a kernel to evict.
  static constexpr std::uint64_t capacity = 128;

  template <class Record> bool push(const Record& record) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == capacity)
      return false;
    records_[head % capacity] = record; // in place
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // With the recorder's mutex held:
  std::uint64_t begin() const noexcept {
    return tail_.load(std::memory_order_relaxed);
  }
  std::uint64_t end() const noexcept {
    return head_.load(std::memory_order_acquire);
  }
  const PendingRecord& operator[](std::uint64_t index) const noexcept {
    return records_[index % capacity];
  }
  void consume_until(std::uint64_t index) noexcept {
    tail_.store(index, std::memory_order_release);
  }

private:
  std::atomic<std::uint64_t> head_{0};
  std::atomic<std::uint64_t> tail_{0};
  PendingRecord records_[capacity];
};

namespace {

/// The spaces of a thread's last copy (see LastSpaces::classify).
struct LastSpaces {
  char dst[space_name_size] = {};
  char src[space_name_size] = {};
  SpaceSide dst_side = SpaceSide::host;
  SpaceSide src_side = SpaceSide::host;
  std::uint32_t dst_id = 0;
  std::uint32_t src_id = 0;
  bool dst_short = false; // terminated within its first 16 bytes
  bool src_short = false;
  /// Host to host only because a name is unknown: see is_known_space.
  bool unknown_host_pair = false;
  std::uint64_t generation = ~std::uint64_t(0);

  void classify(const char* dst_name, const char* src_name,
                struct ThreadState& thread, SpaceSide& dst_side,
                std::uint32_t& dst_id, SpaceSide& src_side,
                std::uint32_t& src_id);

  /// Whether `name` is `kept` (a name that ends within its first 16 bytes
  /// when `short_name`): equal bytes up to the end of `kept`. Bytes that
  /// differ after a terminator (Kokkos pads with zeros) only cost a lookup.
  static bool same_name(const char* kept, bool short_name, const char* name) {
    const std::size_t compared = short_name ? 16 : space_name_size;
    std::uint64_t difference = 0;
    for (std::size_t i = 0; i < compared; i += 8) {
      std::uint64_t x = 0;
      std::uint64_t y = 0;
      std::memcpy(&x, kept + i, 8);
      std::memcpy(&y, name + i, 8);
      difference |= x ^ y;
    }
    return difference == 0;
  }
};

struct ThreadState {
  // Elements are reused (depth counters, never shrinking) so that strings
  // and frames keep their storage: recording allocates nothing once warm.
  std::vector<InFlightCopy> copies;
  std::size_t copy_depth = 0;
  std::vector<InFlightFence> fences;
  std::size_t fence_depth = 0;
  std::uint32_t index = next_thread_index.fetch_add(1);
  std::uint64_t fence_count = 0;
  SpaceCacheEntry spaces[8];
  unsigned next_space = 0;
  // Unknown spaces (by name id) this thread told the registry of.
  std::uint32_t noted_unknown[4] = {};
  LastSpaces last_spaces;
  LastCopy last_copy;
  // Ids this thread needs again and again, found without the mutex.
  std::string label; // the last copy's label, and its id
  std::uint32_t label_id = 0;
  DescriptionCache descriptions;
  RecentStrings names; // of fences, regions and DualViews
  SiteCache sites;
  /// Created with the thread's first record.
  std::unique_ptr<Recorder::Queue> queue;
  // Activity on this thread (copies and fences begun), to merge the fences
  // one Kokkos::fence reports for each execution space into one sync.
  std::uint64_t activity = 0;
  std::uint64_t global_fence_activity = 0;
  std::uint32_t global_fence_name_id = 0;

  /// Tells the registry of an unknown space in a host-to-host pair, once
  /// per space and thread (a loop that alternates pairs takes no lock).
  void note_unknown_space(std::uint32_t id, const char* name) {
    for (std::uint32_t& noted : noted_unknown) {
      if (noted == id)
        return;
      if (noted == 0) {
        noted = id;
        break;
      }
    }
    Impl::note_unknown_space({name, strnlen(name, space_name_size)});
  }

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

  ThreadState() = default;
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
  ~ThreadState() {
    if (queue)
      Recorder::instance().remove_queue(queue.get());
  }
};

ThreadState& thread_state() {
  return FastThreadLocal<ThreadState>::get();
}

/// The side and interned name of a memory space, cached per thread and
/// invalidated when the set of device spaces changes.
void classify(const char* name, ThreadState& thread, SpaceSide& side,
              std::uint32_t& id, bool& unknown) {
  const std::uint64_t generation = Impl::device_space_generation();
  for (SpaceCacheEntry& entry : thread.spaces) {
    if (entry.generation == generation && same_space_name(entry.name, name)) {
      side = entry.side;
      id = entry.id;
      unknown = entry.unknown;
      return;
    }
  }
  const std::string_view text(name, strnlen(name, space_name_size));
  side = space_side(text);
  unknown = !is_known_space(text);
  {
    Recorder& recorder = Recorder::instance();
    std::lock_guard lock(recorder.mutex());
    id = recorder.strings().intern(text);
  }
  SpaceCacheEntry& entry = thread.spaces[thread.next_space++ % 8];
  std::memset(entry.name, 0, sizeof entry.name);
  std::memcpy(entry.name, text.data(), text.size());
  entry.side = side;
  entry.unknown = unknown;
  entry.id = id;
  entry.generation = generation;
}

/// The pair of spaces of the thread's last copy, as Kokkos passed their
/// names: a loop copies between the same two, and two 64-byte comparisons
/// are cheaper than two lookups.
void LastSpaces::classify(const char* dst_name, const char* src_name,
                          ThreadState& thread, SpaceSide& dst_side,
                          std::uint32_t& dst_id, SpaceSide& src_side,
                          std::uint32_t& src_id) {
  const std::uint64_t now = Impl::device_space_generation();
  if (generation != now || !same_name(dst, dst_short, dst_name) ||
      !same_name(src, src_short, src_name)) {
    bool dst_unknown = false;
    bool src_unknown = false;
    Impl::classify(dst_name, thread, this->dst_side, this->dst_id, dst_unknown);
    Impl::classify(src_name, thread, this->src_side, this->src_id, src_unknown);
    unknown_host_pair = this->dst_side == SpaceSide::host &&
                        this->src_side == SpaceSide::host &&
                        (dst_unknown || src_unknown);
    if (dst_unknown && unknown_host_pair)
      thread.note_unknown_space(this->dst_id, dst_name);
    if (src_unknown && unknown_host_pair)
      thread.note_unknown_space(this->src_id, src_name);
    std::memcpy(dst, dst_name, space_name_size);
    std::memcpy(src, src_name, space_name_size);
    dst_short = std::memchr(dst, 0, 16) != nullptr;
    src_short = std::memchr(src, 0, 16) != nullptr;
    generation = now;
  }
  dst_side = this->dst_side;
  dst_id = this->dst_id;
  src_side = this->src_side;
  src_id = this->src_id;
}

/// Fences a tool asked for, not the program.
bool is_tool_fence(std::string_view name) {
  return name.find("Kokkos Profile Tool Fence") != std::string_view::npos;
}

/// On a build with a device backend, a fence of a host execution space is
/// not a wait for the device. Kokkos 4 encodes the execution space type in
/// the top 8 bits of the device id.
bool is_host_execution_space_fence(std::uint32_t device_id) {
#if CUNUMPY_KOKKOS_VERSION >= 40000 && CUNUMPY_KOKKOS_DEVICE_BACKEND
  {
    const std::uint32_t type = device_id >> 24;
    // Serial, OpenMP, HPX, Threads.
    return type == 0 || type == 1 || type == 5 || type == 6;
  }
#endif
  (void)device_id;
  return false;
}

/// A wait the program did not ask for: a fence Kokkos made on its own.
bool is_implicit_fence(std::string_view name) {
  // Kokkos names the fences a user asks for without a name "... Unnamed
  // (Global|Instance) Fence"; its own fences are named after what needs them.
  if (name.find("Unnamed") != std::string_view::npos)
    return false;
  return starts_with(name, "Kokkos::") ||
         name.find("Space::impl_") != std::string_view::npos ||
         starts_with(name, "SharedAllocationRecord"); // a device allocation
}

/// A global fence (Kokkos::fence) is reported once per execution space, with
/// the reason in the low bits of the device id being 0.
bool is_global_fence(std::uint32_t device_id) {
  return (device_id & 0x00ffffffu) == 0;
}

bool copy_is_blocking(const InFlightCopy& copy) {
  if (copy.site.api != nullptr && copy.site.api->async())
    return false;
#if CUNUMPY_KOKKOS_VERSION >= 40000
  // Kokkos 4 fences a blocking copy inside begin/end_deep_copy; a copy on an
  // execution space instance has no fence.
  return copy.saw_fence || copy.scalar;
#else
  // Kokkos 3 reports no fences: a copy is blocking unless cunumpy made it
  // asynchronously.
  return true;
#endif
}

/// The description of a copy Kokkos made on its own; needs the mutex.
std::uint32_t raw_copy_description(Recorder& recorder, ThreadState& thread,
                                   const InFlightCopy& copy) {
  std::uint32_t id = 0;
  if (thread.descriptions.find(copy, id))
    return id;
  std::string what = copy.scalar ? "deep_copy(scalar <- \"" : "deep_copy(\"";
  what += recorder.strings().view(copy.label_id);
  what += "\", nbytes=" + std::to_string(copy.nbytes) + ")";
  id = recorder.strings().intern(what);
  thread.descriptions.store(copy, id);
  return id;
}

/// The ids of a copy's event, from the thread's caches; false when one
/// must be interned.
bool cached_copy_ids(ThreadState& thread, const InFlightCopy& copy,
                     RawEvent& event) {
  if (copy.label_id == 0 || !copy.site.cached(thread.sites, event.site))
    return false;
  event.label = copy.label_id;
  if (copy.site.api != nullptr) {
    event.what = copy.site.api->what_id;
    return event.what != 0;
  }
  return thread.descriptions.find(copy, event.what);
}

/// The id of a name the thread uses often (a region, a fence, a DualView),
/// interned under the mutex the first time.
std::uint32_t name_id(Recorder& recorder, ThreadState& thread,
                      std::string_view name) {
  std::uint32_t id = 0;
  if (thread.names.find(name, id))
    return id;
  {
    std::lock_guard lock(recorder.mutex());
    id = recorder.strings().intern(name);
  }
  thread.names.store(name, id);
  return id;
}

std::uint32_t api_description(Recorder& recorder, ApiScope* api) {
  if (api->what_id == 0)
    api->what_id = recorder.strings().intern(api->what());
  return api->what_id;
}

int backtrace_depth_from_environment() {
  return environment_integer("CUNUMPY_BACKTRACE", default_backtrace_depth, 0,
                             max_frames);
}

} // namespace

namespace {

/// Seconds since start-up, read from the time-stamp counter where it ticks
/// at a constant rate (about 8 ns a read instead of 20 for clock_gettime:
/// every copy is timed twice), else from std::chrono::steady_clock.
class Clock {
public:
  Clock() : epoch_(std::chrono::steady_clock::now()) {
#ifdef CUNUMPY_HAVE_TSC
    if (invariant_tsc()) {
      // Calibrate against steady_clock over one millisecond.
      const auto t0 = std::chrono::steady_clock::now();
      const std::uint64_t c0 = __rdtsc();
      auto t1 = t0;
      while (t1 - t0 < std::chrono::milliseconds(1))
        t1 = std::chrono::steady_clock::now();
      const std::uint64_t c1 = __rdtsc();
      const double seconds = std::chrono::duration<double>(t1 - t0).count();
      if (c1 > c0) {
        seconds_per_tick_ = seconds / static_cast<double>(c1 - c0);
        tsc_epoch_ =
            c0 - static_cast<std::uint64_t>(
                     std::chrono::duration<double>(t0 - epoch_).count() /
                     seconds_per_tick_);
        use_tsc_ = true;
      }
    }
#endif
  }

  double now() const noexcept {
#ifdef CUNUMPY_HAVE_TSC
    if (use_tsc_)
      return static_cast<double>(__rdtsc() - tsc_epoch_) * seconds_per_tick_;
#endif
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         epoch_)
        .count();
  }

private:
  static bool invariant_tsc() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
      if (line.rfind("flags", 0) == 0)
        return line.find(" constant_tsc") != std::string::npos &&
               line.find(" nonstop_tsc") != std::string::npos;
    return false;
  }

  std::chrono::steady_clock::time_point epoch_;
  bool use_tsc_ = false;
  std::uint64_t tsc_epoch_ = 0;
  double seconds_per_tick_ = 0.0;
};

/// Made by the recorder's constructor: an event needs a recorder first.
const Clock* the_clock = nullptr;

} // namespace

Recorder::Recorder() : backtrace_depth_(backtrace_depth_from_environment()) {
  the_clock = new Clock(); // calibrated now, not during the first event
}

Recorder& Recorder::instance() {
  // Never destroyed: Kokkos may report events during static destruction.
  static Recorder* recorder = new Recorder();
  return *recorder;
}

void Recorder::attach(EventSink* sink) {
  std::lock_guard lock(mutex_);
  flush(); // what happened before is not the new sink's
  for (auto& [attached, references] : sinks_) {
    if (attached == sink) {
      ++references;
      return;
    }
  }
  sinks_.emplace_back(sink, 1);
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

void Recorder::detach(EventSink* sink) {
  std::lock_guard lock(mutex_);
  flush(); // what happened until now is still the sink's
  auto it = std::find_if(sinks_.begin(), sinks_.end(), [&](const auto& entry) {
    return entry.first == sink;
  });
  if (it == sinks_.end())
    return;
  if (--it->second == 0)
    sinks_.erase(it);
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

void Recorder::dispatch(const PendingRecord& record) {
  if (const auto* event = std::get_if<RawEvent>(&record)) {
    for (auto& entry : sinks_)
      entry.first->on_event(*event);
  } else if (const auto* push = std::get_if<RegionPush>(&record)) {
    for (auto& entry : sinks_)
      entry.first->on_region_push(push->name, push->time);
  } else if (const auto* pop = std::get_if<RegionPop>(&record)) {
    for (auto& entry : sinks_)
      entry.first->on_region_pop(pop->time);
  } else if (const auto* dual = std::get_if<DualViewEvent>(&record)) {
    for (auto& entry : sinks_)
      entry.first->on_dual_view(*dual);
  }
}

namespace {

/// When a record happened: the order of records from different threads.
double time_of(const PendingRecord& record) {
  if (const auto* event = std::get_if<RawEvent>(&record))
    return event->start + event->duration;
  if (const auto* push = std::get_if<RegionPush>(&record))
    return push->time;
  if (const auto* pop = std::get_if<RegionPop>(&record))
    return pop->time;
  return std::get<DualViewEvent>(record).time;
}

} // namespace

void Recorder::flush() {
  // Records a thread queues while this runs wait for the next flush.
  const std::size_t count = queues_.size();
  cursors_.resize(2 * count);
  std::uint64_t* const next = cursors_.data();
  std::uint64_t* const end = next + count;
  std::size_t waiting = 0;
  for (std::size_t i = 0; i < count; ++i) {
    next[i] = queues_[i]->begin();
    end[i] = queues_[i]->end();
    waiting += next[i] != end[i] ? 1 : 0;
  }
  const auto deliver = [&](const PendingRecord& record) {
    try {
      dispatch(record);
    } catch (...) {
      // A sink out of memory loses this record, not the others.
    }
  };
  if (waiting == 1) {
    // The usual case: one thread made events since the last flush.
    for (std::size_t i = 0; i < count; ++i) {
      for (; next[i] != end[i]; ++next[i])
        deliver((*queues_[i])[next[i]]);
      queues_[i]->consume_until(end[i]);
    }
    return;
  }
  if (waiting == 0)
    return;
  // Several threads: the earliest record first. Each thread's records are
  // in its order already.
  for (;;) {
    std::size_t earliest = count;
    double earliest_time = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      if (next[i] == end[i])
        continue;
      const double time = time_of((*queues_[i])[next[i]]);
      if (earliest == count || time < earliest_time) {
        earliest = i;
        earliest_time = time;
      }
    }
    if (earliest == count)
      break;
    deliver((*queues_[earliest])[next[earliest]++]);
  }
  for (std::size_t i = 0; i < count; ++i)
    queues_[i]->consume_until(end[i]);
}

template <class Record> void Recorder::post(const Record& record) {
  ThreadState& thread = thread_state();
  if (!thread.queue) {
    auto queue = std::make_unique<Queue>();
    add_queue(queue.get());
    thread.queue = std::move(queue);
  }
  while (!thread.queue->push(record)) {
    std::lock_guard lock(mutex_);
    flush();
  }
}

template void Recorder::post(const RawEvent&);
template void Recorder::post(const RegionPush&);
template void Recorder::post(const RegionPop&);
template void Recorder::post(const DualViewEvent&);

void Recorder::add_queue(Queue* queue) {
  std::lock_guard lock(mutex_);
  queues_.push_back(queue);
}

void Recorder::remove_queue(Queue* queue) {
  std::lock_guard lock(mutex_);
  flush();
  queues_.erase(std::remove(queues_.begin(), queues_.end(), queue),
                queues_.end());
}

double Recorder::now() const noexcept {
  return the_clock->now();
}

void Recorder::set_backtrace_depth(int depth) noexcept {
  backtrace_depth_.store(std::clamp(depth, 0, max_frames),
                         std::memory_order_relaxed);
}

Event to_public(const RawEvent& raw) {
  Recorder& recorder = Recorder::instance();
  Event event;
  event.kind = raw.kind;
  event.nbytes = raw.nbytes;
  event.what = recorder.strings().view(raw.what);
  event.label = recorder.strings().view(raw.label);
  event.src_space = recorder.strings().view(raw.src_space);
  event.dst_space = recorder.strings().view(raw.dst_space);
  event.site = recorder.sites().resolve(raw.site);
  event.blocking = raw.blocking;
  event.async = raw.async();
  event.implicit = raw.implicit;
  event.thread = raw.thread;
  event.timestamp = raw.start;
  event.duration = raw.duration;
  return event;
}

std::uint64_t thread_fence_count() noexcept {
  return thread_state().fence_count;
}

std::uint32_t thread_index() noexcept {
  return thread_state().index;
}

namespace feed {

void begin_deep_copy(const char* dst_space, const char* dst_label,
                     const void* dst_ptr, const char* src_space,
                     const char* src_label, const void* src_ptr,
                     std::uint64_t size) noexcept {
  try {
    ThreadState& thread = thread_state();
    ++thread.activity;
    InFlightCopy& copy = thread.push_copy();
    copy.transfer = false;
    copy.saw_fence = false;
    copy.has_recorded_child = false;
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    SpaceSide dst_side, src_side;
    thread.last_spaces.classify(dst_space, src_space, thread, dst_side,
                                copy.dst_space, src_side, copy.src_space);
    if (dst_side == SpaceSide::host && src_side == SpaceSide::host) {
      if (thread.last_spaces.unknown_host_pair)
        count_unknown_space_copy(); // a device space no one named?
      return;                       // host to host: not a transfer
    }
    copy.transfer = true;
    copy.kind = dst_side == SpaceSide::host   ? EventKind::to_host
                : src_side == SpaceSide::host ? EventKind::to_device
                                              : EventKind::device_copy;
    copy.scalar = copy.kind == EventKind::to_host && dst_label != nullptr &&
                  std::strcmp(dst_label, "Scalar") == 0;
    copy.nbytes = size;
    copy.dst_ptr = dst_ptr;
    copy.src_ptr = src_ptr;
    // Loops copy the same views: reuse the last label's id when it matches.
    const char* label = src_label != nullptr ? src_label : "";
    if (thread.label_id != 0 && std::strcmp(thread.label.c_str(), label) == 0) {
      copy.label_id = thread.label_id;
    } else {
      copy.label_id = 0;
      copy.label.assign(label);
    }
    copy.site.capture(recorder);
    copy.start = recorder.now();
  } catch (...) {
  }
}

void end_deep_copy() noexcept {
  try {
    ThreadState& thread = thread_state();
    if (thread.copy_depth == 0)
      return;
    InFlightCopy& copy = thread.copies[--thread.copy_depth];
    // A copy made of inner deep copies is recorded through them only.
    if (!copy.transfer || copy.has_recorded_child)
      return;
    Recorder& recorder = Recorder::instance();
    RawEvent event;
    event.kind = copy.kind;
    event.blocking = copy_is_blocking(copy);
    event.thread = thread.index;
    event.nbytes = copy.nbytes;
    event.src_space = copy.src_space;
    event.dst_space = copy.dst_space;
    event.start = copy.start;
    event.duration = recorder.now() - copy.start;
    if (!cached_copy_ids(thread, copy, event)) {
      std::lock_guard lock(recorder.mutex());
      event.site = copy.site.intern(recorder, thread.sites);
      if (copy.label_id == 0) {
        thread.label = copy.label;
        thread.label_id = recorder.strings().intern(copy.label);
        copy.label_id = thread.label_id;
      }
      event.label = copy.label_id;
      event.what = copy.site.api != nullptr
                       ? api_description(recorder, copy.site.api)
                       : raw_copy_description(recorder, thread, copy);
    }
    recorder.post(event);
    if (copy.scalar) {
      // Reading a device value into a host scalar makes the host wait.
      RawEvent sync = event;
      sync.kind = EventKind::sync;
      sync.nbytes = 0;
      sync.blocking = true;
      sync.implicit = true;
      recorder.post(sync);
    }
    for (std::size_t i = 0; i < thread.copy_depth; ++i)
      thread.copies[i].has_recorded_child = true;
    thread.last_copy = {true,      copy.dst_ptr, copy.src_ptr,
                        copy.kind, copy.nbytes,  event.site};
  } catch (...) {
  }
}

void begin_fence(const char* name, std::uint32_t device_id) noexcept {
  try {
    ThreadState& thread = thread_state();
    ++thread.activity;
    InFlightFence& fence = thread.push_fence();
    fence.recorded = false;
    fence.global = is_global_fence(device_id);
    if (thread.copy_depth > 0) {
      // A copy's own fence: it makes the copy blocking, not a sync apart.
      thread.copies[thread.copy_depth - 1].saw_fence = true;
      return;
    }
    Recorder& recorder = Recorder::instance();
    const std::string_view fence_name = name != nullptr ? name : "";
    if (!recorder.has_sinks() || is_tool_fence(fence_name) ||
        is_host_execution_space_fence(device_id))
      return;
    // The waits of a blocking cunumpy call around its copies (Kokkos fences
    // after a device allocation and before freeing a host temporary) belong
    // to the call, which waits anyway: not a sync apart. SyncScopes record
    // their wait; a wait inside an asynchronous call is recorded, implicit.
    const ApiScope* api = ApiScope::current();
    if (api != nullptr && !api->single_sync && !api->async())
      return;
    ++thread.fence_count; // recorded: SyncScope need not record it again
    fence.recorded = true;
    fence.name.assign(fence_name);
    fence.site.capture(recorder);
    fence.start = recorder.now();
  } catch (...) {
  }
}

void end_fence() noexcept {
  try {
    ThreadState& thread = thread_state();
    if (thread.fence_depth == 0)
      return;
    InFlightFence& fence = thread.fences[--thread.fence_depth];
    if (!fence.recorded)
      return;
    Recorder& recorder = Recorder::instance();
    RawEvent event;
    event.kind = EventKind::sync;
    event.blocking = true;
    event.implicit = is_implicit_fence(fence.name) ||
                     (fence.site.api != nullptr && fence.site.api->async());
    event.thread = thread.index;
    event.start = fence.start;
    event.duration = recorder.now() - fence.start;
    event.label = name_id(recorder, thread, fence.name);
    event.what =
        fence.site.api != nullptr ? fence.site.api->what_id : event.label;
    if (event.what == 0 || !fence.site.cached(thread.sites, event.site)) {
      std::lock_guard lock(recorder.mutex());
      event.site = fence.site.intern(recorder, thread.sites);
      if (fence.site.api != nullptr)
        event.what = api_description(recorder, fence.site.api);
    }
    if (ApiScope* api = fence.site.api; api != nullptr && api->single_sync) {
      if (api->sync_recorded)
        return;
      api->sync_recorded = true;
    }
#if CUNUMPY_KOKKOS_VERSION >= 40000
    if (fence.global) {
      // The next execution space's part of the same Kokkos::fence: nothing
      // else happened on this thread since the previous part ended.
      const bool same_fence =
          thread.global_fence_name_id == event.label &&
          thread.global_fence_activity + 1 == thread.activity;
      thread.global_fence_name_id = event.label;
      thread.global_fence_activity = thread.activity;
      if (same_fence)
        return;
    }
#endif
    recorder.post(event);
  } catch (...) {
  }
}

void push_region(const char* name) noexcept {
  try {
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    const double time = recorder.now();
    recorder.post(RegionPush{
        name_id(recorder, thread_state(), name != nullptr ? name : ""), time});
  } catch (...) {
  }
}

void pop_region() noexcept {
  try {
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    recorder.post(RegionPop{recorder.now()});
  } catch (...) {
  }
}

namespace {

void dual_view_event(const char* label, const void* ptr, bool sync,
                     bool device) {
  Recorder& recorder = Recorder::instance();
  if (!recorder.has_sinks())
    return;
  ThreadState& thread = thread_state();
  DualViewEvent event;
  event.pointer = ptr;
  event.sync = sync;
  event.device = device;
  event.time = recorder.now();
  // Kokkos reports a sync after the deep copy it made, with the address of
  // the allocation (the view's data, or its header 128 bytes before).
  const LastCopy& last = thread.last_copy;
  if (sync && last.valid) {
    const auto data = reinterpret_cast<std::uintptr_t>(last.dst_ptr);
    const auto reported = reinterpret_cast<std::uintptr_t>(ptr);
    if (data >= reported && data - reported <= 256) {
      event.copied = true;
      event.source = last.src_ptr;
      event.copy_kind = last.kind;
      event.nbytes = last.nbytes;
      event.site = last.site;
    }
  }
  thread.last_copy.valid = false;
  event.label = name_id(recorder, thread, label != nullptr ? label : "");
  if (!event.copied) {
    CapturedSite site;
    site.capture(recorder);
    if (!site.cached(thread.sites, event.site)) {
      std::lock_guard lock(recorder.mutex());
      event.site = site.intern(recorder, thread.sites);
    }
  }
  recorder.post(event);
}

} // namespace

void dual_view_sync(const char* label, const void* ptr,
                    bool to_device) noexcept {
  try {
    dual_view_event(label, ptr, true, to_device);
  } catch (...) {
  }
}

void dual_view_modify(const char* label, const void* ptr,
                      bool on_device) noexcept {
  try {
    dual_view_event(label, ptr, false, on_device);
  } catch (...) {
  }
}

} // namespace feed

// ApiScope, SyncScope and markers: the recorder side of cunumpy's own calls.

namespace {
thread_local ApiScope* current_api_scope CUNUMPY_FAST_TLS = nullptr;
} // namespace

ApiScope::ApiScope(std::string_view api, SourceLocation where,
                   const ArrayShape* shape, bool async)
    : async_(async) {
  what_.assign(api);
  if (shape != nullptr) {
    what_ += "(shape=";
    what_ += shape_string(*shape);
    what_ += ", dtype=";
    what_ += shape->dtype;
    what_ += ")";
  } else {
    what_ += "()";
  }
  if (where.known()) {
    file_ = where.file;
    line_ = where.line;
    function_ = where.function != nullptr ? where.function : "";
  }
  enter();
}

ApiScope::ApiScope(std::string_view what, std::string_view file, int line,
                   std::string_view function, bool async)
    : what_(what), file_(file), line_(line), function_(function),
      async_(async) {
  enter();
}

void ApiScope::enter() {
  outer_ = current_api_scope;
  if (outer_ != nullptr) {
    // The user's line is the outermost call's; the description is ours.
    if (!outer_->file_.empty()) {
      file_ = outer_->file_;
      line_ = outer_->line_;
      function_ = outer_->function_;
    }
    async_ = async_ || outer_->async_;
  }
  current_api_scope = this;
}

ApiScope::~ApiScope() {
  current_api_scope = outer_;
}

ApiScope* ApiScope::current() noexcept {
  return current_api_scope;
}

std::string shape_string(const ArrayShape& shape) {
  std::string text = "(";
  for (int i = 0; i < shape.rank; ++i) {
    if (i > 0)
      text += ", ";
    text += std::to_string(shape.extents[i]);
  }
  if (shape.rank == 1)
    text += ",";
  text += ")";
  return text;
}

void record_marker(EventKind kind, std::string_view what,
                   SourceLocation where) {
  Recorder& recorder = Recorder::instance();
  if (!recorder.has_sinks())
    return;
  ApiScope scope(what, where.file != nullptr ? where.file : "", where.line,
                 where.function != nullptr ? where.function : "");
  CapturedSite site;
  site.capture(recorder);
  RawEvent event;
  event.kind = kind;
  event.blocking = false;
  ThreadState& thread = thread_state();
  event.thread = thread.index;
  event.start = recorder.now();
  {
    std::lock_guard lock(recorder.mutex());
    event.site = site.intern(recorder, thread.sites);
    event.what = recorder.strings().intern(what);
  }
  recorder.post(event);
}

SyncScope::SyncScope(std::string_view what, SourceLocation where, bool implicit)
    : api_(what, where), fences_before_(thread_fence_count()),
      start_(Recorder::instance().now()), implicit_(implicit) {
  api_.single_sync = true;
}

SyncScope::~SyncScope() {
  try {
    if (thread_fence_count() != fences_before_)
      return; // Kokkos reported the fence; it is recorded already
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    CapturedSite site;
    site.capture(recorder);
    RawEvent event;
    event.kind = EventKind::sync;
    event.blocking = true;
    event.implicit = implicit_;
    ThreadState& thread = thread_state();
    event.thread = thread.index;
    event.start = start_;
    event.duration = recorder.now() - start_;
    {
      std::lock_guard lock(recorder.mutex());
      event.site = site.intern(recorder, thread.sites);
      event.what = api_description(recorder, &api_);
      event.label = event.what;
    }
    recorder.post(event);
  } catch (...) {
  }
}

} // namespace cunumpy::Impl
