#include "call_sites/stack_capture.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <link.h>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>
#include <vector>

#include "call_sites/frame_rules.hpp"
#include "call_sites/modules.hpp"
#include "support/fast_thread_local.hpp"

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
#define CUNUMPY_CACHED_UNWINDER 1
#else
#define CUNUMPY_CACHED_UNWINDER 0
#endif

namespace cunumpy::Impl {
namespace {

/// Frames kept after the first one outside the libraries: enough to get
/// past non-inlined Kokkos templates instantiated in the application.
constexpr int frames_after_first_caller = 4;

struct Module {
  std::uintptr_t begin;
  std::uintptr_t end;
  bool library;
};

/// Address ranges of the loaded modules, sorted. Rebuilt (and the old table
/// kept alive: readers use it without a lock) when an address falls outside
/// every known module or a library was loaded or unloaded since.
struct ModuleTable {
  std::vector<Module> modules;
  std::uint64_t generation = 0;
  /// The table this one replaced: every table stays reachable from
  /// current_table, so that LeakSanitizer, in any program that loads
  /// cunumpy, sees memory kept on purpose, not a leak.
  const ModuleTable* previous = nullptr;

  const Module* find(std::uintptr_t address) const {
    auto it = std::upper_bound(
        modules.begin(), modules.end(), address,
        [](std::uintptr_t a, const Module& m) { return a < m.begin; });
    if (it == modules.begin())
      return nullptr;
    --it;
    return address < it->end ? &*it : nullptr;
  }
};

int add_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* table = static_cast<ModuleTable*>(data);
  const bool library = is_library_module(*info);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD || (header.p_flags & PF_X) == 0)
      continue;
    const std::uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    table->modules.push_back({begin, begin + header.p_memsz, library});
  }
  return 0;
}

std::atomic<const ModuleTable*> current_table{nullptr};
std::mutex rebuild_mutex;
int rebuilds = 0;

const ModuleTable* rebuild() {
  std::lock_guard lock(rebuild_mutex);
  if (rebuilds > 256) // pathological dlopen churn: keep the last table
    return current_table.load(std::memory_order_acquire);
  ++rebuilds;
  auto* table = new ModuleTable(); // never freed: lock-free readers
  table->previous = current_table.load(std::memory_order_relaxed);
  table->generation = modules_generation();
  dl_iterate_phdr(&add_module, table);
  std::sort(table->modules.begin(), table->modules.end(),
            [](const Module& a, const Module& b) { return a.begin < b.begin; });
  current_table.store(table, std::memory_order_release);
  return table;
}

} // namespace

void lock_stack_capture_for_fork() noexcept {
  rebuild_mutex.lock();
}
void unlock_stack_capture_after_fork() noexcept {
  rebuild_mutex.unlock();
}

namespace {

/// The module of `address`, rebuilding the table once if it is unknown.
const Module* find_module(const ModuleTable*& table, std::uintptr_t address) {
  const Module* module = table->find(address);
  if (module == nullptr) {
    table = rebuild();
    module = table->find(address);
  }
  return module;
}

/// Counts frames outside the libraries and says when to stop.
struct StopRule {
  int depth;
  bool stop_after_caller;
  int callers = 0;

  bool stop(int count, bool library) {
    if (!library)
      ++callers;
    return count >= depth ||
           (stop_after_caller && callers > frames_after_first_caller);
  }
};

struct PortableWalk {
  void** frames;
  int count;
  StopRule stop;
  const ModuleTable* table;
};

_Unwind_Reason_Code visit(_Unwind_Context* context, void* data) {
  auto* walk = static_cast<PortableWalk*>(data);
  const auto ip = static_cast<std::uintptr_t>(_Unwind_GetIP(context));
  if (ip == 0)
    return _URC_END_OF_STACK;
  walk->frames[walk->count++] = reinterpret_cast<void*>(ip);
  const Module* module = find_module(walk->table, ip - 1);
  const bool library = module != nullptr && module->library;
  return walk->stop.stop(walk->count, library) ? _URC_END_OF_STACK
                                               : _URC_NO_REASON;
}

/// libgcc's unwinder: interprets the call frame information of every frame
/// anew, about 80 ns a frame.
__attribute__((noinline)) int capture_portable(void** frames,
                                               StopRule stop) noexcept {
  const ModuleTable* table = current_table.load(std::memory_order_acquire);
  if (table == nullptr)
    table = rebuild();
  PortableWalk walk{frames, 0, stop, table};
  _Unwind_Backtrace(&visit, &walk);
  return walk.count;
}

std::atomic<std::uint64_t> fallbacks{0};

#if CUNUMPY_CACHED_UNWINDER

// The rules and walks start as zero pages (ThreadUnwinder's operator new):
// their members have no initializers, and all zeros is empty.

/// A frame rule cached under the address it holds at: 16 bytes.
struct CachedRule {
  std::uintptr_t pc; // 0: empty
  std::int32_t cfa_offset;
  std::int8_t ra_slot;  // offset from the CFA, in 8-byte words
  std::int8_t rbp_slot; // likewise
  FrameRule::Kind kind;
  std::uint8_t flags;

  static constexpr std::uint8_t cfa_from_rbp = 1;
  static constexpr std::uint8_t rbp_saved = 2;
  static constexpr std::uint8_t library = 4;
};

/// One walk, kept to be replayed. A walk is a function of the registers it
/// starts from and of the stack words it reads: return addresses (which
/// select the rules) and saved frame pointers. From the same stack pointer,
/// with the same words at the same addresses, it finds the same frames. So
/// a replay compares the words, a load and a compare each, and does no
/// rule arithmetic: a copy made again from the same line costs a few
/// nanoseconds. The frames are the non-null return addresses read.
struct Trace {
  /// A return address and a saved rbp per frame for 64 frames, the deepest
  /// capture: every walk is kept, also where every frame keeps a frame
  /// pointer (code built with -fno-omit-frame-pointer, as sanitizer builds
  /// and some distributions' packages are), whose walks read two words a
  /// frame.
  static constexpr int max_frames = 64;
  static constexpr int max_reads = 2 * max_frames;
  // What a replay reads before the reads, in the trace's first line.
  std::uintptr_t sp; // at the start; 0: empty
  std::uintptr_t rbp;
  bool rbp_read; // the walk used the frame pointer it started with
  bool stop_after_caller;
  int depth;
  int reads;
  int frame_count; // frames after the first
  std::uint64_t last_use;
  WalkHead head; // the caller's word (WalkMemo)
  struct Read {
    std::uintptr_t address;
    std::uintptr_t word;
  };
  Read read[max_reads];
  std::uint8_t frame_read[max_frames]; // the reads that are the frames

  void record(std::uintptr_t address, std::uintptr_t word, bool frame) {
    if (reads < max_reads) {
      read[reads] = {address, word};
      if (frame && word != 0 && frame_count < max_frames)
        frame_read[frame_count++] = static_cast<std::uint8_t>(reads);
    }
    ++reads; // past max_reads: not kept
  }
};

/// Where a walk is. Its frame pointer is either the one it started with or
/// a word read from the stack; that word counts as read (and a replay
/// compares it) only once a rule computes a frame from it: a saved rbp no
/// rule uses holds any register's value, which may change from call to call.
struct Registers {
  std::uintptr_t sp = 0;
  std::uintptr_t rbp = 0;
  std::uintptr_t rbp_address = 0; // 0: the starting rbp; else its stack slot
  bool rbp_recorded = false;

  void use_rbp(Trace& walk) {
    if (rbp_address == 0) {
      walk.rbp_read = true;
    } else if (!rbp_recorded) {
      walk.record(rbp_address, rbp, false);
      rbp_recorded = true;
    }
  }
};

/// Per thread: the bounds of its stack (every address the walk reads is
/// checked against them, so a wrong rule cannot fault), a direct-mapped
/// cache of frame rules and the last walks, all cleared when a library is
/// loaded or unloaded.
#ifdef __GLIBC__
extern "C" void* __libc_stack_end; // the stack pointer at the process' start
#endif

/// The main thread's stack: from its start's stack pointer down by the
/// stack's size limit, as glibc's pthread_getattr_np says, without the read
/// of /proc/self/maps it makes for that thread (65 us with 37 mappings,
/// more in a program of many libraries). A walk reads only from the stack
/// pointer up. False on other threads, whose bounds glibc keeps at hand.
bool main_thread_stack(std::uintptr_t& low, std::uintptr_t& high) {
#ifdef __GLIBC__
  if (static_cast<pid_t>(::syscall(SYS_gettid)) != ::getpid() ||
      __libc_stack_end == nullptr)
    return false;
  rlimit limit{};
  if (::getrlimit(RLIMIT_STACK, &limit) != 0)
    return false;
  // Above the start's stack pointer: the arguments, the environment and
  // the auxiliary vector, up to the end of the mapping.
  const auto top = reinterpret_cast<std::uintptr_t>(__libc_stack_end);
  const std::uintptr_t page = 4096;
  high = (top + page - 1) / page * page;
  const std::uintptr_t size =
      limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > high
          ? high - page // unlimited: all below, but the first page
          : static_cast<std::uintptr_t>(limit.rlim_cur);
  low = high - size;
  return true;
#else
  (void)low;
  (void)high;
  return false;
#endif
}

struct alignas(64) ThreadUnwinder {
  static constexpr int cache_bits = 10;
  /// Walks by stack pointer: 8 sets of 8, as the copies of several lines
  /// of one function start at the same stack pointer.
  static constexpr int trace_sets = 8;
  static constexpr int trace_ways = 8;
  // What every capture reads or writes before its trace, in the first
  // line: after a time step that streams more than the caches, each line
  // a capture reads is a miss.
  std::uintptr_t stack_low = 0;
  std::uintptr_t stack_high = 0;          // 0: bounds unknown, always portable
  std::uint8_t last_hit[trace_sets] = {}; // tried first
  std::uint64_t uses = 0;
  // Statistics of this thread: counted here, not in shared atomics, so that
  // threads replaying at once write no common cache line.
  std::uint64_t replays = 0;
  std::uint64_t refused_replays = 0;
  std::uint64_t walks = 0; // serials
  std::uint64_t generation = ~std::uint64_t(0);
  CachedRule rules[1 << cache_bits];
  Trace traces[trace_sets][trace_ways];
  /// The stack pointer of each way's trace (0: empty), a line per set: a
  /// capture whose last replayed way does not hold finds the other ways
  /// that may replay by reading one line, not the header of every trace
  /// (2 KB apart; after a kernel that evicted them, a miss each), as when
  /// copies from several lines of one function take turns. Only a filter:
  /// still_holds decides, so a way whose walk is being written over,
  /// marked 0 first, is never replayed.
  struct alignas(64) WayStackPointers {
    std::uintptr_t sp[trace_ways];
  };
  WayStackPointers way_sp[trace_sets];

  /// About 150 KB, mapped: untouched pages of the rule cache and of the
  /// walks stay zero pages, so a thread pays (in page faults) only for the
  /// ones its captures use.
  static void* operator new(std::size_t size) {
    void* pages = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED)
      throw std::bad_alloc();
    return pages;
  }
  static void operator delete(void* pages, std::size_t size) {
    ::munmap(pages, size);
  }

  ThreadUnwinder() {
    if (main_thread_stack(stack_low, stack_high))
      return;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0)
      return;
    void* address = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attributes, &address, &size) == 0) {
      stack_low = reinterpret_cast<std::uintptr_t>(address);
      stack_high = stack_low + size;
    }
    pthread_attr_destroy(&attributes);
  }

  bool on_stack(std::uintptr_t address) const {
    return address >= stack_low && address + 8 <= stack_high &&
           address % 8 == 0;
  }

  const CachedRule& rule(std::uintptr_t pc, const ModuleTable*& table) {
    const std::size_t slot = (pc * 0x9e3779b97f4a7c15ull) >> (64 - cache_bits);
    CachedRule& entry = rules[slot];
    if (entry.pc == pc)
      return entry;
    const FrameRule rule = read_frame_rule(pc);
    entry = CachedRule{};
    entry.pc = pc;
    entry.kind = rule.kind;
    entry.cfa_offset = rule.cfa_offset;
    entry.ra_slot = static_cast<std::int8_t>(rule.ra_offset / 8);
    entry.rbp_slot = static_cast<std::int8_t>(rule.rbp_offset / 8);
    if (rule.kind == FrameRule::Kind::step &&
        (rule.ra_offset != entry.ra_slot * 8 ||
         rule.rbp_offset != entry.rbp_slot * 8))
      entry.kind = FrameRule::Kind::unsupported;
    if (rule.cfa_from_rbp)
      entry.flags |= CachedRule::cfa_from_rbp;
    if (rule.rbp_saved)
      entry.flags |= CachedRule::rbp_saved;
    const Module* module = find_module(table, pc);
    if (module != nullptr && module->library)
      entry.flags |= CachedRule::library;
    return entry;
  }

  static std::size_t set_of(std::uintptr_t sp) {
    return ((sp >> 3) * 0x9e3779b97f4a7c15ull) >> 61;
  }

  /// Where a new walk from `sp` goes: an empty trace, else the one unused
  /// the longest.
  static Trace& victim(Trace (&set)[trace_ways]) {
    Trace* oldest = &set[0];
    for (Trace& trace : set) {
      if (trace.sp == 0)
        return trace;
      if (trace.last_use < oldest->last_use)
        oldest = &trace;
    }
    return *oldest;
  }

  void clear() {
    for (CachedRule& entry : rules)
      entry.pc = 0;
    for (auto& set : traces)
      for (Trace& trace : set)
        trace.sp = 0;
    for (WayStackPointers& set : way_sp)
      for (std::uintptr_t& sp : set.sp)
        sp = 0;
  }

  /// Steps from the frame at `at` to its caller with `rule`; false when an
  /// address to read is not on this thread's stack. The words the result
  /// depends on go to `walk`.
  bool step(const CachedRule& rule, Registers& at,
            std::uintptr_t& return_address, Trace& walk) const {
    const bool from_rbp = (rule.flags & CachedRule::cfa_from_rbp) != 0;
    if (from_rbp)
      at.use_rbp(walk);
    const std::uintptr_t cfa =
        (from_rbp ? at.rbp : at.sp) + std::uintptr_t(rule.cfa_offset);
    const std::uintptr_t ra_address = cfa + std::intptr_t(rule.ra_slot) * 8;
    if (cfa <= at.sp || cfa > stack_high || !on_stack(ra_address))
      return false;
    if ((rule.flags & CachedRule::rbp_saved) != 0) {
      const std::uintptr_t rbp_address = cfa + std::intptr_t(rule.rbp_slot) * 8;
      if (!on_stack(rbp_address))
        return false;
      at.rbp = *reinterpret_cast<const std::uintptr_t*>(rbp_address);
      at.rbp_address = rbp_address;
      at.rbp_recorded = false;
    }
    return_address = *reinterpret_cast<const std::uintptr_t*>(ra_address);
    walk.record(ra_address, return_address, true);
    at.sp = cfa;
    return true;
  }

  /// Whether the stack at (sp, rbp) still holds the words `trace` read.
  /// Its addresses were on this thread's stack, above the same stack
  /// pointer: they still are.
  static bool still_holds(const Trace& trace, const StopRule& stop,
                          std::uintptr_t sp, std::uintptr_t rbp) {
    if (trace.sp != sp || trace.depth != stop.depth ||
        trace.stop_after_caller != stop.stop_after_caller ||
        (trace.rbp_read && trace.rbp != rbp))
      return false;
    std::uintptr_t difference = 0;
    // Unrolled: a loop's replay compares some 20 words, and the loop's own
    // count and branch were a third of its instructions.
#pragma GCC unroll 4
    for (int i = 0; i < trace.reads; ++i)
      difference |=
          *reinterpret_cast<const std::uintptr_t*>(trace.read[i].address) ^
          trace.read[i].word;
    return difference == 0;
  }

  /// The frames of a trace that replays: the return addresses it read.
  static int frames_of(const Trace& trace, void** frames) {
    for (int i = 0; i < trace.frame_count; ++i)
      frames[i + 1] =
          reinterpret_cast<void*>(trace.read[trace.frame_read[i]].word);
    return trace.frame_count + 1;
  }
};

static_assert(offsetof(ThreadUnwinder, generation) + 8 <= 64,
              "a capture's first reads are one line");

ThreadUnwinder& thread_unwinder() {
  return FastThreadLocal<ThreadUnwinder, &HotThreadLocals::unwinder>::get();
}

/// A replay of the walk `kept`: its frames, or none when the caller keeps
/// a site for them (see WalkMemo).
int replayed(ThreadUnwinder& unwinder, Trace& kept, int way,
             std::uint8_t& last_hit, void** frames, WalkMemo* memo) {
  kept.last_use = ++unwinder.uses;
  last_hit = static_cast<std::uint8_t>(way);
  ++unwinder.replays;
  if (memo != nullptr) {
    *memo = WalkMemo(&kept.head);
    if (kept.head.memo != 0)
      return kept.frame_count + 1; // the caller needs no frames
  }
  return ThreadUnwinder::frames_of(kept, frames);
}

int walk(ThreadUnwinder& unwinder, void** frames, StopRule stop, WalkMemo* memo,
         std::uintptr_t ip, std::uintptr_t sp, std::uintptr_t rbp);

/// Captures with cached frame rules: a replay of an earlier walk from the
/// same stack pointer when the stack still holds what it read (a load and
/// a compare per word), else a walk, a few nanoseconds a frame. The count
/// of frames, or -1 when a frame needs the portable unwinder.
__attribute__((noinline)) int capture_cached(void** frames, StopRule stop,
                                             WalkMemo* memo) noexcept {
  ThreadUnwinder& unwinder = thread_unwinder();
  std::uintptr_t ip = 0;
  std::uintptr_t sp = 0;
  std::uintptr_t rbp = 0;
  // The registers at one address of this function: the walk starts here,
  // with the rule that holds at that address.
  asm volatile("leaq 0(%%rip), %0\n\t"
               "movq %%rsp, %1\n\t"
               "movq %%rbp, %2"
               : "=r"(ip), "=r"(sp), "=r"(rbp));
  if (unwinder.stack_high == 0 || !unwinder.on_stack(sp))
    return -1; // bounds unknown, or on an alternate or user-made stack
  frames[0] = reinterpret_cast<void*>(ip);
  // A replay needs no check for loaded or unloaded libraries (a lock and a
  // walk of the loader's list, more than the replay costs): it succeeds
  // only when the stack holds the return addresses the walk read, so the
  // same calls. The way that replayed last first: a loop repeats its copies.
  const std::size_t set_index = ThreadUnwinder::set_of(sp);
  std::uint8_t& last_hit = unwinder.last_hit[set_index];
  Trace& last = unwinder.traces[set_index][last_hit];
  if (ThreadUnwinder::still_holds(last, stop, sp, rbp))
    return replayed(unwinder, last, last_hit, last_hit, frames, memo);
  return walk(unwinder, frames, stop, memo, ip, sp, rbp);
}

/// The other ways of the set, then a walk from (ip, sp, rbp), the
/// registers of capture_cached, whose frame is still there.
__attribute__((noinline)) int walk(ThreadUnwinder& unwinder, void** frames,
                                   StopRule stop, WalkMemo* memo,
                                   std::uintptr_t ip, std::uintptr_t sp,
                                   std::uintptr_t rbp) {
  const std::size_t set_index = ThreadUnwinder::set_of(sp);
  auto& set = unwinder.traces[set_index];
  std::uint8_t& last_hit = unwinder.last_hit[set_index];
  std::uintptr_t(&way_sp)[ThreadUnwinder::trace_ways] =
      unwinder.way_sp[set_index].sp;
  bool refused = way_sp[last_hit] == sp;
  for (int way = 0; way < ThreadUnwinder::trace_ways; ++way) {
    if (way == last_hit || way_sp[way] != sp)
      continue; // tried, or from another stack pointer
    Trace& kept = set[way];
    if (ThreadUnwinder::still_holds(kept, stop, sp, rbp))
      return replayed(unwinder, kept, way, last_hit, frames, memo);
    refused = true;
  }
  if (refused)
    ++unwinder.refused_replays;

  // A walk reads cached rules by address: they must be those of the
  // libraries loaded now.
  const ModuleTable* table = current_table.load(std::memory_order_acquire);
  const std::uint64_t generation = modules_generation();
  if (table == nullptr || table->generation != generation)
    table = rebuild();
  if (unwinder.generation != generation) {
    if (unwinder.walks != 0) // else all empty: the pages stay untouched
      unwinder.clear();
    unwinder.generation = generation;
  }

  // The walk is written into the trace, which is valid (sp set) only once
  // it is complete.
  Registers at{sp, rbp};
  Trace& trace = ThreadUnwinder::victim(set);
  std::uintptr_t& trace_sp =
      way_sp[&trace - &set[0]]; // the way's line, kept equal to trace.sp
  trace.sp = 0;
  trace_sp = 0;
  trace.rbp = rbp;
  trace.rbp_read = false;
  trace.depth = stop.depth;
  trace.stop_after_caller = stop.stop_after_caller;
  trace.reads = 0;
  trace.frame_count = 0;
  trace.head = WalkHead{};
  trace.head.serial = ++unwinder.walks;
  int count = 1;
  const CachedRule* rule = &unwinder.rule(ip, table);
  const auto remember = [&] {
    if (trace.reads <= Trace::max_reads && count <= Trace::max_frames) {
      trace.sp = sp;
      trace_sp = sp;
      trace.last_use = ++unwinder.uses;
      if (memo != nullptr)
        *memo = WalkMemo(&trace.head);
    }
    return count;
  };
  for (;;) {
    if (stop.stop(count, (rule->flags & CachedRule::library) != 0) ||
        rule->kind == FrameRule::Kind::end_of_stack)
      return remember();
    if (rule->kind != FrameRule::Kind::step)
      return -1;
    std::uintptr_t return_address = 0;
    if (!unwinder.step(*rule, at, return_address, trace))
      return -1;
    if (return_address == 0)
      return remember();
    frames[count++] = reinterpret_cast<void*>(return_address);
    rule = &unwinder.rule(return_address - 1, table);
  }
}

#endif

} // namespace

int capture_stack(void** frames, int depth, CaptureOptions options,
                  WalkMemo* memo) noexcept {
  if (memo != nullptr)
    *memo = WalkMemo();
  if (depth <= 0)
    return 0;
  const StopRule stop{depth, options.stop_after_caller};
#if CUNUMPY_CACHED_UNWINDER
  if (!options.portable_only) {
    const int count = capture_cached(frames, stop, memo);
    if (count >= 0)
      return count;
    fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
#endif
  return capture_portable(frames, stop);
}

StackCaptureStatistics stack_capture_statistics() noexcept {
  StackCaptureStatistics statistics{fallbacks.load(std::memory_order_relaxed),
                                    0, 0};
#if CUNUMPY_CACHED_UNWINDER
  const ThreadUnwinder& unwinder = thread_unwinder();
  statistics.replays = unwinder.replays;
  statistics.refused_replays = unwinder.refused_replays;
#endif
  return statistics;
}

} // namespace cunumpy::Impl
