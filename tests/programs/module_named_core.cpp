// A module of the program named like cunumpy's Python module
// (_core.<tag>.so, as PyPI's pet-kokkos names its extension), making raw
// copies through Kokkos' tools entry points: its frames are the program's,
// so its copies' call sites name it. Built twice (tests/CMakeLists.txt):
// with debug information, and stripped.

#include <pthread.h>

#include <Kokkos_Core.hpp>

#define CUNUMPY_CONCAT_(a, b) a##b
#define CUNUMPY_CONCAT(a, b) CUNUMPY_CONCAT_(a, b)

namespace {
char device_memory[64];
char host_memory[64];

int copy() {
  const auto device = Kokkos::Tools::make_space_handle("Cuda");
  const auto host = Kokkos::Tools::make_space_handle("Host");
  const int line = __LINE__ + 1;
  Kokkos::Tools::beginDeepCopy(device, "d", device_memory, host, "h",
                               host_memory, 64);
  Kokkos::Tools::endDeepCopy();
  return line;
}

void* copy_on_thread(void*) {
  copy();
  return nullptr;
}
} // namespace

/// Makes a copy; returns the line that made it.
extern "C" __attribute__((visibility("default"), noinline)) int
CUNUMPY_MODULE_COPY() {
  return copy();
}

/// Makes a copy on a thread of its own: no frame with a line is above the
/// module's, so the site is the module's whatever it has.
extern "C" __attribute__((visibility("default"))) void
CUNUMPY_CONCAT(CUNUMPY_MODULE_COPY, _on_thread)() {
  pthread_t thread;
  if (pthread_create(&thread, nullptr, &copy_on_thread, nullptr) == 0)
    pthread_join(thread, nullptr);
}
