// A Kokkos Tools library for tests that forwards to the next library of the
// tools list, the way kokkos-tools' sampler and kernel-filter do: its
// position in the list is its load sequence, the next entry is loaded with
// RTLD_GLOBAL, and init goes on with load sequence + 1. It counts what it
// receives and, at finalize, writes "name count" lines to the file named by
// KP_FORWARDING_TOOL_OUTPUT (with "load_sequence N").
//
// Built with KP_KERNELS_ONLY (kp_kernel_only_tool), it has only the entry
// points of init, finalize and kernels, as kokkos-tools' sampler: a tool
// after it then sees no copy.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

#include <impl/Kokkos_Profiling_C_Interface.h>

namespace {

Kokkos_Profiling_EventSet next{};
int load_sequence = -1;
std::atomic<std::uint64_t> deep_copies{0}, fences{0}, regions{0}, kernels{0};

template <class Function> void lookup(void* library, const char* name,
                                      Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
}

std::vector<std::string> tools_list() {
  const char* list = std::getenv("KOKKOS_TOOLS_LIBS");
  if (list == nullptr)
    list = std::getenv("KOKKOS_PROFILE_LIBRARY");
  std::vector<std::string> entries;
  std::string entry;
  for (const char* c = list != nullptr ? list : ""; ; ++c) {
    if (*c == ';' || *c == '\0') {
      if (!entry.empty())
        entries.push_back(entry);
      entry.clear();
      if (*c == '\0')
        break;
    } else {
      entry += *c;
    }
  }
  return entries;
}

} // namespace

extern "C" {

void kokkosp_init_library(const int sequence, const uint64_t version,
                          const uint32_t count,
                          Kokkos_Profiling_KokkosPDeviceInfo* devices) {
  load_sequence = sequence;
  const std::vector<std::string> entries = tools_list();
  if (sequence < 0 || std::size_t(sequence) + 1 >= entries.size())
    return;
  void* library = ::dlopen(entries[sequence + 1].c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "kp_forwarding_tool: cannot load %s: %s\n",
                 entries[sequence + 1].c_str(), ::dlerror());
    std::exit(1);
  }
  lookup(library, "kokkosp_init_library", next.init);
  lookup(library, "kokkosp_finalize_library", next.finalize);
  lookup(library, "kokkosp_begin_parallel_for", next.begin_parallel_for);
  lookup(library, "kokkosp_end_parallel_for", next.end_parallel_for);
#ifndef KP_KERNELS_ONLY
  {
    lookup(library, "kokkosp_push_profile_region", next.push_region);
    lookup(library, "kokkosp_pop_profile_region", next.pop_region);
    lookup(library, "kokkosp_begin_deep_copy", next.begin_deep_copy);
    lookup(library, "kokkosp_end_deep_copy", next.end_deep_copy);
    lookup(library, "kokkosp_begin_fence", next.begin_fence);
    lookup(library, "kokkosp_end_fence", next.end_fence);
    lookup(library, "kokkosp_dual_view_sync", next.sync_dual_view);
    lookup(library, "kokkosp_dual_view_modify", next.modify_dual_view);
    lookup(library, "kokkosp_request_tool_settings",
           next.request_tool_settings);
  }
#endif
  if (next.init != nullptr)
    next.init(sequence + 1, version, count, devices);
}

void kokkosp_finalize_library() {
  if (next.finalize != nullptr)
    next.finalize();
  if (const char* path = std::getenv("KP_FORWARDING_TOOL_OUTPUT")) {
    if (std::FILE* out = std::fopen(path, "w")) {
      std::fprintf(out,
                   "load_sequence %d\ndeep_copy %llu\nfence %llu\n"
                   "push_region %llu\nkernel %llu\n",
                   load_sequence, (unsigned long long)deep_copies,
                   (unsigned long long)fences, (unsigned long long)regions,
                   (unsigned long long)kernels);
      std::fclose(out);
    }
  }
}

#ifndef KP_KERNELS_ONLY
void kokkosp_request_tool_settings(const uint32_t count,
                                   Kokkos_Tools_ToolSettings* settings) {
  if (next.request_tool_settings != nullptr)
    next.request_tool_settings(count, settings);
}

#endif

void kokkosp_begin_parallel_for(const char* name, const uint32_t device,
                                uint64_t* id) {
  ++kernels;
  if (next.begin_parallel_for != nullptr)
    next.begin_parallel_for(name, device, id);
}
void kokkosp_end_parallel_for(const uint64_t id) {
  if (next.end_parallel_for != nullptr)
    next.end_parallel_for(id);
}
#ifndef KP_KERNELS_ONLY
void kokkosp_push_profile_region(const char* name) {
  ++regions;
  if (next.push_region != nullptr)
    next.push_region(name);
}
void kokkosp_pop_profile_region() {
  if (next.pop_region != nullptr)
    next.pop_region();
}
void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst,
                             const char* dst_label, const void* dst_ptr,
                             Kokkos_Profiling_SpaceHandle src,
                             const char* src_label, const void* src_ptr,
                             uint64_t size) {
  ++deep_copies;
  if (next.begin_deep_copy != nullptr)
    next.begin_deep_copy(dst, dst_label, dst_ptr, src, src_label, src_ptr,
                         size);
}
void kokkosp_end_deep_copy() {
  if (next.end_deep_copy != nullptr)
    next.end_deep_copy();
}
void kokkosp_begin_fence(const char* name, const uint32_t device,
                         uint64_t* handle) {
  ++fences;
  if (next.begin_fence != nullptr)
    next.begin_fence(name, device, handle);
}
void kokkosp_end_fence(const uint64_t handle) {
  if (next.end_fence != nullptr)
    next.end_fence(handle);
}
void kokkosp_dual_view_sync(const char* label, const void* const ptr,
                            bool to_device) {
  if (next.sync_dual_view != nullptr)
    next.sync_dual_view(label, ptr, to_device);
}
void kokkosp_dual_view_modify(const char* label, const void* const ptr,
                              bool on_device) {
  if (next.modify_dual_view != nullptr)
    next.modify_dual_view(label, ptr, on_device);
}
#endif

} // extern "C"
