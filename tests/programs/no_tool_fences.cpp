// cunumpy's library makes Kokkos fence for no tool: Kokkos 3.5 and newer
// fence before and after every kernel and region event while a tool takes
// them, unless the tool said at Kokkos' initialize that it needs no fences
// (the library does, when it is loaded). Counts the fences Kokkos makes
// for tools (named "...Kokkos Profile Tool Fence") through a begin-fence
// callback set before cunumpy's hooks, which cunumpy forwards to.
// Exit status 77: a Kokkos older than 3.5, which has no such fences.

#include <cstdio>
#include <cstring>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#if KOKKOS_VERSION >= 30500
namespace {

int tool_fences = 0;

void count_fence(const char* name, std::uint32_t, std::uint64_t* id) {
  if (name != nullptr && std::strstr(name, "Profile Tool Fence") != nullptr)
    ++tool_fences;
  *id = 0;
}

} // namespace
#endif

int main(int argc, char** argv) {
#if KOKKOS_VERSION < 30500
  (void)argc;
  (void)argv;
  std::printf("no_tool_fences: Kokkos before 3.5 makes no tool fences\n");
  return 77;
#else
  Kokkos::ScopeGuard kokkos(argc, argv);
  Kokkos::Tools::Experimental::set_begin_fence_callback(&count_fence);
  auto counted = cunumpy::profiling::count_transfers();
  Kokkos::View<double*> view("view", 100);
  for (int step = 0; step < 10; ++step) {
    Kokkos::Profiling::pushRegion("step");
    Kokkos::parallel_for(
        "fill", 100, KOKKOS_LAMBDA(int i) { view(i) = i; });
    Kokkos::Profiling::popRegion();
  }
  Kokkos::fence();
  std::printf("no_tool_fences: %d fence(s) made for tools\n", tool_fences);
  return tool_fences == 0 ? 0 : 1;
#endif
}
