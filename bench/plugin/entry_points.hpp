// The entry points of a Kokkos Tools library, looked up with dlsym as Kokkos
// looks them up: what the plugin's benchmarks call instead of Kokkos.
#ifndef CUNUMPY_BENCH_PLUGIN_ENTRY_POINTS_HPP
#define CUNUMPY_BENCH_PLUGIN_ENTRY_POINTS_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <type_traits>

#include <impl/Kokkos_Profiling_C_Interface.h>

namespace bench {

struct EntryPoints {
  Kokkos_Profiling_initFunction init = nullptr;
  Kokkos_Profiling_finalizeFunction finalize = nullptr;
  Kokkos_Profiling_beginDeepCopyFunction begin_copy = nullptr;
  Kokkos_Profiling_endDeepCopyFunction end_copy = nullptr;
  Kokkos_Profiling_beginFenceFunction begin_fence = nullptr;
  Kokkos_Profiling_endFenceFunction end_fence = nullptr;
  Kokkos_Profiling_pushFunction push = nullptr;
  Kokkos_Profiling_popFunction pop = nullptr;
  Kokkos_Profiling_beginFunction begin_for = nullptr;
  Kokkos_Profiling_endFunction end_for = nullptr;
};

namespace none {
// What Kokkos costs when a tool does not take an event: nothing is called.
inline void copy(Kokkos_Profiling_SpaceHandle, const char*, const void*,
                 Kokkos_Profiling_SpaceHandle, const char*, const void*,
                 std::uint64_t) {}
inline void end() {}
/// A fence's or a kernel's begin.
inline void begin(const char*, std::uint32_t, std::uint64_t*) {}
inline void end_id(std::uint64_t) {}
inline void push(const char*) {}
} // namespace none

/// The entry points of the library at `path` (none without a path). An
/// event entry point the library lacks is an error unless `optional`, when
/// a function that does nothing stands in for it (a tool that takes no copy
/// event costs nothing for one). `program` names the caller in errors.
inline EntryPoints load_entry_points(const char* path, const char* program,
                                     bool optional) {
  void* library = nullptr;
  if (path != nullptr) {
    library = ::dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (library == nullptr) {
      std::fprintf(stderr, "%s: %s\n", program, ::dlerror());
      std::exit(2);
    }
  }
  const auto find = [&](const char* name, auto& function, auto stand_in,
                        bool needed) {
    using Function = std::remove_reference_t<decltype(function)>;
    void* symbol = library != nullptr ? ::dlsym(library, name) : nullptr;
    function = symbol != nullptr ? reinterpret_cast<Function>(symbol)
                                 : static_cast<Function>(stand_in);
    if (symbol == nullptr && needed) {
      std::fprintf(stderr, "%s: %s has no %s\n", program,
                   path != nullptr ? path : "(no library)", name);
      std::exit(2);
    }
  };
  EntryPoints points;
  find("kokkosp_init_library", points.init, nullptr, !optional);
  find("kokkosp_finalize_library", points.finalize, nullptr, !optional);
  find("kokkosp_begin_deep_copy", points.begin_copy, &none::copy, !optional);
  find("kokkosp_end_deep_copy", points.end_copy, &none::end, !optional);
  find("kokkosp_begin_fence", points.begin_fence, &none::begin, !optional);
  find("kokkosp_end_fence", points.end_fence, &none::end_id, !optional);
  find("kokkosp_push_profile_region", points.push, &none::push, !optional);
  find("kokkosp_pop_profile_region", points.pop, &none::end, !optional);
  find("kokkosp_begin_parallel_for", points.begin_for, &none::begin, !optional);
  find("kokkosp_end_parallel_for", points.end_for, &none::end_id, !optional);
  return points;
}

/// A space handle named `name`, as Kokkos passes it.
inline Kokkos_Profiling_SpaceHandle space(const char* name) {
  Kokkos_Profiling_SpaceHandle handle{};
  std::strncpy(handle.name, name, sizeof handle.name - 1);
  return handle;
}

} // namespace bench

#endif
