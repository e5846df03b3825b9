// For LD_PRELOAD: operator new throws std::bad_alloc for allocations of
// exactly FAIL_ALLOC_SIZE bytes, the first FAIL_ALLOC_TIMES of them (1 when
// unset), and otherwise allocates with malloc. Makes one allocation of the
// plugin fail in a real process (the JSON report's buffer is 65537 bytes),
// so that the tests see what a failure at the end of a run leaves.

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

long from_environment(const char* name, long otherwise) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atol(text) : otherwise;
}

std::atomic<long> failures_left{-1};

bool fails(std::size_t size) {
  static const long failing = from_environment("FAIL_ALLOC_SIZE", -1);
  if (failing < 0 || static_cast<long>(size) != failing)
    return false;
  long left = failures_left.load();
  if (left < 0) {
    long expected = -1;
    failures_left.compare_exchange_strong(
        expected, from_environment("FAIL_ALLOC_TIMES", 1));
    left = failures_left.load();
  }
  while (left > 0)
    if (failures_left.compare_exchange_weak(left, left - 1))
      return true;
  return false;
}

} // namespace

void* operator new(std::size_t size) {
  if (fails(size))
    throw std::bad_alloc();
  if (void* memory = std::malloc(size != 0 ? size : 1))
    return memory;
  throw std::bad_alloc();
}

void operator delete(void* memory) noexcept {
  std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
  std::free(memory);
}
