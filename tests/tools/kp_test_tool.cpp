// A minimal Kokkos Tools library for tests: it counts the events it receives
// and, at finalize, writes the counts to the file named by
// KP_TEST_TOOL_OUTPUT (or stderr), one "name count" per line. Loaded as a
// second tool, it shows that cunumpy forwards every event. With
// KP_TEST_TOOL_NO_GLOBAL_FENCING set it opts out of Kokkos' global fencing,
// as the plugin does: the floor of the plugin's benchmark. With
// KP_TEST_TOOL_SPIN_KERNEL_END_US=N it spins N microseconds in every
// kernel's end event: a tool of known cost there, for the benchmark's test
// that it times the kernel's events.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <impl/Kokkos_Profiling_C_Interface.h>

namespace {

std::atomic<std::uint64_t> inits{0}, finalizes{0}, deep_copies{0},
    deep_copy_ends{0}, fences{0}, fence_ends{0}, regions{0}, region_pops{0},
    kernels{0}, dual_view_syncs{0}, dual_view_modifies{0};
std::atomic<std::uint64_t> next_handle{1};
long spin_kernel_end_us = 0;

void write_counts() {
  FILE* out = stderr;
  if (const char* path = std::getenv("KP_TEST_TOOL_OUTPUT"))
    if (FILE* file = std::fopen(path, "w"))
      out = file;
  std::fprintf(out,
               "init %llu\nfinalize %llu\ndeep_copy %llu\nend_deep_copy "
               "%llu\nfence %llu\nend_fence %llu\npush_region %llu\n"
               "pop_region %llu\nkernel %llu\ndual_view_sync %llu\n"
               "dual_view_modify %llu\n",
               (unsigned long long)inits, (unsigned long long)finalizes,
               (unsigned long long)deep_copies,
               (unsigned long long)deep_copy_ends, (unsigned long long)fences,
               (unsigned long long)fence_ends, (unsigned long long)regions,
               (unsigned long long)region_pops, (unsigned long long)kernels,
               (unsigned long long)dual_view_syncs,
               (unsigned long long)dual_view_modifies);
  if (out != stderr)
    std::fclose(out);
}

} // namespace

extern "C" {

void kokkosp_init_library(const int, const uint64_t, const uint32_t,
                          Kokkos_Profiling_KokkosPDeviceInfo*) {
  ++inits;
  if (const char* spin = std::getenv("KP_TEST_TOOL_SPIN_KERNEL_END_US"))
    spin_kernel_end_us = std::strtol(spin, nullptr, 10);
}

void kokkosp_request_tool_settings(const uint32_t,
                                   Kokkos_Tools_ToolSettings* settings) {
  if (std::getenv("KP_TEST_TOOL_NO_GLOBAL_FENCING") != nullptr)
    settings->requires_global_fencing = false;
}

void kokkosp_finalize_library() {
  ++finalizes;
  write_counts();
}

void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle, const char*,
                             const void*, Kokkos_Profiling_SpaceHandle,
                             const char*, const void*, uint64_t) {
  ++deep_copies;
}

void kokkosp_end_deep_copy() {
  ++deep_copy_ends;
}

void kokkosp_begin_fence(const char*, const uint32_t, uint64_t* handle) {
  ++fences;
  *handle = next_handle++;
}

void kokkosp_end_fence(const uint64_t) {
  ++fence_ends;
}

void kokkosp_push_profile_region(const char*) {
  ++regions;
}

void kokkosp_pop_profile_region() {
  ++region_pops;
}

void kokkosp_begin_parallel_for(const char*, const uint32_t, uint64_t* id) {
  ++kernels;
  *id = next_handle++;
}

void kokkosp_end_parallel_for(const uint64_t) {
  if (spin_kernel_end_us <= 0)
    return;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::microseconds(spin_kernel_end_us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void kokkosp_dual_view_sync(const char*, const void* const, bool) {
  ++dual_view_syncs;
}

void kokkosp_dual_view_modify(const char*, const void* const, bool) {
  ++dual_view_modifies;
}

} // extern "C"
