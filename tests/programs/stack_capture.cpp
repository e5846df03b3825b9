// The cached unwinder (src/core/stack_capture.cpp) against libgcc's
// _Unwind_Backtrace: the same stacks, frame for frame, through frames with
// and without a frame pointer, alloca, over-aligned locals, deep recursion,
// C library callbacks and threads; and from a signal handler, whose frame
// it leaves to libgcc. Built with the project's optimization, so most frames
// have no frame pointer.

#include "stack_capture.hpp"

#include <algorithm>
#include <alloca.h>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>
#include <utility>
#include <vector>

#include "check.hpp"

namespace {

using cunumpy::Impl::capture_stack;
using cunumpy::Impl::CaptureOptions;
using cunumpy::Impl::stack_capture_fallbacks;

constexpr int depth = 64;

bool in_cunumpy(void* address) {
  Dl_info info{};
  return dladdr(address, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libcunumpy") != nullptr;
}

/// One call site for both unwinders, so that the frames from the first one
/// outside libcunumpy must be the same (inside it they differ: libgcc's path
/// is a tail call).
struct Capture {
  std::vector<void*> frames;
  bool truncated = false; // stopped at `depth`
};

__attribute__((noinline)) Capture capture(bool portable_only) {
  void* frames[depth];
  const int count = capture_stack(frames, depth, {false, portable_only});
  int first = 0;
  while (first < count && in_cunumpy(frames[first]))
    ++first;
  return {std::vector<void*>(frames + first, frames + count), count == depth};
}

struct Comparison {
  Capture cached;
  Capture portable;
  std::uint64_t fallbacks = 0;
};

Comparison compare_here() {
  Comparison comparison;
  for (const bool portable_only : {false, true}) { // one call site for both
    const std::uint64_t fallbacks_before = stack_capture_fallbacks();
    Capture captured = capture(portable_only);
    if (portable_only) {
      comparison.portable = std::move(captured);
    } else {
      comparison.cached = std::move(captured);
      comparison.fallbacks = stack_capture_fallbacks() - fallbacks_before;
    }
  }
  return comparison;
}

volatile int sink = 0;

// Each level differs in frame layout; noinline keeps them real frames.
__attribute__((noinline)) Comparison recurse(int level);

__attribute__((noinline)) Comparison with_alloca(int level) {
  auto* buffer = static_cast<volatile char*>(alloca(64 + level * 16));
  buffer[0] = char(level);
  Comparison result = recurse(level - 1);
  sink = sink + buffer[0];
  return result;
}

__attribute__((noinline)) Comparison with_aligned_local(int level) {
  alignas(64) volatile double local[8];
  local[0] = level;
  Comparison result = recurse(level - 1);
  sink = sink + int(local[0]);
  return result;
}

__attribute__((noinline)) Comparison recurse(int level) {
  if (level <= 0)
    return compare_here();
  switch (level % 3) {
  case 0:
    return with_alloca(level);
  case 1:
    return with_aligned_local(level);
  default: {
    Comparison result = recurse(level - 1);
    sink = sink + 1;
    return result;
  }
  }
}

Comparison from_qsort;

int compare_ints(const void* a, const void* b) {
  if (from_qsort.cached.frames.empty())
    from_qsort = recurse(4);
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

Comparison from_signal;

void on_signal(int) {
  from_signal = recurse(3);
}

int check(const char* name, const Comparison& comparison, bool expect_cached) {
  const int failures_before = failures();
  const std::vector<void*>& cached = comparison.cached.frames;
  const std::vector<void*>& portable = comparison.portable.frames;
  // At the depth limit libgcc's path, one frame shorter inside libcunumpy,
  // keeps one more caller.
  if (!comparison.cached.truncated || !comparison.portable.truncated)
    CHECK_EQ(cached.size(), portable.size());
  CHECK_EQ(cached.size() > 4, true);
  const std::size_t common = std::min(cached.size(), portable.size());
  for (std::size_t i = 0; i < common; ++i)
    CHECK_EQ(cached[i], portable[i]);
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
  CHECK_EQ(comparison.fallbacks, expect_cached ? 0u : 1u);
#else
  (void)expect_cached;
#endif
  if (failures() != failures_before)
    std::cerr << "  in: " << name << "\n";
  return failures();
}

} // namespace

int main() {
  check("main", recurse(0), true);
  check("mixed frames, 10 deep", recurse(10), true);
  check("mixed frames, 40 deep (past the depth)", recurse(40), true);

  std::vector<int> numbers{3, 1, 2};
  std::qsort(numbers.data(), numbers.size(), sizeof(int), &compare_ints);
  check("a C library callback (qsort)", from_qsort, true);

  Comparison in_thread;
  std::thread([&] { in_thread = recurse(7); }).join();
  check("a thread", in_thread, true);

  std::signal(SIGUSR1, &on_signal);
  std::raise(SIGUSR1);
  check("a signal handler", from_signal, false);

  return failures() == 0 ? 0 : 1;
}
