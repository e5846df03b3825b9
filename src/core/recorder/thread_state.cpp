#include "recorder/thread_state.hpp"

#include <algorithm>
#include <atomic>

#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "recorder/spaces.hpp"
#include "support/fast_thread_local.hpp"

namespace cunumpy::Impl {
namespace {

std::atomic<std::uint32_t> next_thread_index{0};

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

} // namespace

bool SiteCache::find(void* const* frames, int count,
                     std::uint32_t& site) const {
  if (count > max_frames)
    return false;
  const Entry& entry = entries_[slot(frames, count)];
  if (entry.site == 0 || entry.count != count ||
      !std::equal(frames, frames + count, entry.frames))
    return false;
  site = entry.site;
  return true;
}

void SiteCache::store(void* const* frames, int count, std::uint32_t site) {
  if (count > max_frames)
    return;
  Entry& entry = entries_[slot(frames, count)];
  entry.count = count;
  entry.site = site;
  std::copy(frames, frames + count, entry.frames);
}

std::size_t SiteCache::slot(void* const* frames, int count) {
  std::uint64_t hash = std::uint64_t(count);
  for (int i = 0; i < count; ++i)
    hash = (hash ^ reinterpret_cast<std::uintptr_t>(frames[i])) *
           0x9e3779b97f4a7c15ull;
  return static_cast<std::size_t>(hash >> 61) % size;
}

void CapturedSite::capture(const Recorder& recorder) {
  api = ApiScope::current();
  frame_count = 0;
  memo_site = 0;
  have_fallback = false;
  if (api != nullptr && !api->file().empty())
    return;
  const int depth = recorder.backtrace_depth();
  const auto provider = recorder.site_provider();
  // A replayed walk gives the same frames; with a provider, equal frames
  // may still be different sites (another Python line through the same
  // native frames), so its site is not taken from the memo then (cached,
  // intern).
  memo = WalkMemo();
  if (depth > 0)
    frame_count = capture_stack(frames, std::min(depth, max_frames), {}, &memo);
  memo_site = memo.get();
  if (provider != nullptr)
    have_fallback = provider(fallback_file, fallback_line, fallback_function);
}

bool CapturedSite::cached(const SiteCache& cache, std::uint32_t& id) const {
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

std::uint32_t CapturedSite::intern(Recorder& recorder, SiteCache& cache,
                                   const RecorderLock& lock) const {
  SiteTable& table = recorder.sites(lock);
  if (from_api()) {
    if (api->site_id == 0)
      api->site_id = table.known(api->file(), api->line(), api->function());
    return api->site_id;
  }
  if (memo_site != 0 && !have_fallback)
    return memo_site;
  const std::uint32_t fallback =
      have_fallback
          ? table.known(fallback_file, fallback_line, fallback_function)
          : 0;
  const std::uint32_t id = table.stack(frames, frame_count, fallback);
  if (!have_fallback) {
    cache.store(frames, frame_count, id);
    memo.set(id);
  }
  return id;
}

ThreadState::ThreadState() : index(next_thread_index.fetch_add(1)) {}

ThreadState::ThreadState(std::uint32_t thread_index) : index(thread_index) {}

void ThreadState::join(Recorder& joined) {
  recorder = &joined;
  joined.add_thread(*this);
  // Room for a copy and a fence in flight now, at the thread's first
  // event: its first copy allocates nothing (after a fork, the child's
  // first event takes no allocator lock another thread may have held).
  copies.reserve(2);
  fences.reserve(2);
}

ThreadState& ThreadState::in(Recorder& joined) {
  if (recorder == nullptr && !left) {
    join(joined);
    return *this;
  }
  ThreadState* state = this;
  for (; state->next != nullptr; state = state->next.get())
    if (state->next->recorder == &joined)
      return *state->next;
  state->next = std::make_unique<ThreadState>(index);
  state->next->join(joined);
  return *state->next;
}

ThreadState* ThreadState::find(const Recorder& joined) noexcept {
  for (ThreadState* state = this; state != nullptr; state = state->next.get())
    if (state->recorder == &joined)
      return state;
  return nullptr;
}

void ThreadState::leave(Recorder& ended) noexcept {
  if (recorder == &ended) {
    ended.remove_thread(*this);
    recorder = nullptr;
    left = true; // its caches hold the ended recorder's ids
    return;
  }
  for (ThreadState* state = this; state->next != nullptr;
       state = state->next.get()) {
    if (state->next->recorder == &ended) {
      std::unique_ptr<ThreadState> gone = std::move(state->next);
      state->next = std::move(gone->next);
      return; // ~ThreadState leaves the recorder
    }
  }
}

ThreadState::~ThreadState() {
  if (recorder == nullptr)
    return;
  // The thread ends in the middle of a copy: the copy counts. Not when
  // it ends inside cunumpy's lock (exit from a signal handler that
  // interrupted cunumpy): the process ends without a report then.
  if (copy_depth > 0 && !recorder->lock_held_by_this_thread())
    record::end_copies_in_flight(*recorder, *this);
  recorder->remove_thread(*this);
}

void ThreadState::note_unknown_space(std::uint32_t id, const char* name) {
  for (std::uint32_t& noted : noted_unknown) {
    if (noted == id)
      return;
    if (noted == 0) {
      noted = id;
      break;
    }
  }
  recorder->spaces().note_unknown({name, strnlen(name, space_name_size)});
}

void classify_space(const char* name, ThreadState& thread, SpaceSide& side,
                    std::uint32_t& id, bool& unknown) {
  Recorder& recorder = *thread.recorder; // joined at its event's start
  SpaceRegistry& registry = recorder.spaces();
  const std::uint64_t generation = registry.generation();
  for (SpaceCacheEntry& entry : thread.spaces) {
    if (entry.generation == generation && same_space_name(entry.name, name)) {
      side = entry.side;
      id = entry.id;
      unknown = entry.unknown;
      return;
    }
  }
  const std::string_view text(name, strnlen(name, space_name_size));
  side = registry.side(text);
  unknown = !registry.is_known(text);
  {
    if (side == SpaceSide::device)
      recorder.note_device_space();
    const RecorderLock lock = recorder.lock();
    allocation_point();
    id = recorder.strings(lock).intern(text);
  }
  SpaceCacheEntry& entry = thread.spaces[thread.next_space++ % 8];
  std::memset(entry.name, 0, sizeof entry.name);
  std::memcpy(entry.name, text.data(), text.size());
  entry.side = side;
  entry.unknown = unknown;
  entry.id = id;
  entry.generation = generation;
}

void LastSpaces::reclassify(const char* dst_name, const char* src_name,
                            ThreadState& thread,
                            std::uint64_t space_generation) {
  bool dst_unknown = false;
  bool src_unknown = false;
  classify_space(dst_name, thread, dst_side, dst_id, dst_unknown);
  classify_space(src_name, thread, src_side, src_id, src_unknown);
  unknown_host_pair = dst_side == SpaceSide::host &&
                      src_side == SpaceSide::host &&
                      (dst_unknown || src_unknown);
  if (dst_unknown && unknown_host_pair)
    thread.note_unknown_space(dst_id, dst_name);
  if (src_unknown && unknown_host_pair)
    thread.note_unknown_space(src_id, src_name);
  std::memcpy(dst_head, dst_name, head_size);
  std::memcpy(dst_tail, dst_name + head_size, space_name_size - head_size);
  std::memcpy(src_head, src_name, head_size);
  std::memcpy(src_tail, src_name + head_size, space_name_size - head_size);
  dst_short = std::memchr(dst_head, 0, head_size) != nullptr;
  src_short = std::memchr(src_head, 0, head_size) != nullptr;
  generation = space_generation;
}

namespace {

/// A name the thread has not used lately, interned under the mutex.
std::uint32_t new_name_id(Recorder& recorder, ThreadState& thread,
                          std::string_view name) {
  std::uint32_t id = 0;
  {
    const RecorderLock lock = recorder.lock();
    allocation_point();
    id = recorder.strings(lock).intern(name);
  }
  thread.names.store(name, id);
  return id;
}

} // namespace

std::uint32_t recent_name_id(Recorder& recorder, ThreadState& thread,
                             std::string_view name) {
  std::uint32_t id = 0;
  return thread.names.find(name, id) ? id : new_name_id(recorder, thread, name);
}

std::uint32_t recent_name_id(Recorder& recorder, ThreadState& thread,
                             const char* name) {
  std::uint32_t id = 0;
  return thread.names.find(name, id) ? id : new_name_id(recorder, thread, name);
}

} // namespace cunumpy::Impl
