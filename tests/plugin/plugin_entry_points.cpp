// Drives libkp_cunumpy through its C entry points the way Kokkos does, with
// no Kokkos runtime: it works on every Kokkos version, with device space
// names ("Cuda") a host-only build never produces. test_entry_points.py
// checks the report and the trace it leaves.
//
//   plugin_entry_points <libkp_cunumpy.so> <expect fencing: 0|1>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

#include <impl/Kokkos_Profiling_C_Interface.h>

namespace {

int failures = 0;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "plugin_entry_points: FAILED: %s\n", what);
    ++failures;
  }
}

template <class Function> Function symbol(void* library, const char* name) {
  auto* function = reinterpret_cast<Function>(::dlsym(library, name));
  if (function == nullptr) {
    std::fprintf(stderr, "plugin_entry_points: %s is not exported\n", name);
    std::exit(2);
  }
  return function;
}

Kokkos_Profiling_SpaceHandle space(const char* name) {
  Kokkos_Profiling_SpaceHandle handle;
  std::memset(handle.name, 0, sizeof handle.name);
  std::strncpy(handle.name, name, sizeof handle.name - 1);
  return handle;
}

struct Plugin {
  explicit Plugin(void* library)
      : init(symbol<Kokkos_Profiling_initFunction>(library,
                                                   "kokkosp_init_library")),
        finalize(symbol<Kokkos_Profiling_finalizeFunction>(
            library, "kokkosp_finalize_library")),
        settings(symbol<Kokkos_Tools_requestToolSettingsFunction>(
            library, "kokkosp_request_tool_settings")),
        begin_copy(symbol<Kokkos_Profiling_beginDeepCopyFunction>(
            library, "kokkosp_begin_deep_copy")),
        end_copy(symbol<Kokkos_Profiling_endDeepCopyFunction>(
            library, "kokkosp_end_deep_copy")),
        begin_fence(symbol<Kokkos_Profiling_beginFenceFunction>(
            library, "kokkosp_begin_fence")),
        end_fence(symbol<Kokkos_Profiling_endFenceFunction>(
            library, "kokkosp_end_fence")),
        push(symbol<Kokkos_Profiling_pushFunction>(
            library, "kokkosp_push_profile_region")),
        pop(symbol<Kokkos_Profiling_popFunction>(library,
                                                 "kokkosp_pop_profile_region")),
        begin_for(symbol<Kokkos_Profiling_beginFunction>(
            library, "kokkosp_begin_parallel_for")),
        end_for(symbol<Kokkos_Profiling_endFunction>(
            library, "kokkosp_end_parallel_for")),
        begin_reduce(symbol<Kokkos_Profiling_beginFunction>(
            library, "kokkosp_begin_parallel_reduce")),
        end_reduce(symbol<Kokkos_Profiling_endFunction>(
            library, "kokkosp_end_parallel_reduce")),
        begin_scan(symbol<Kokkos_Profiling_beginFunction>(
            library, "kokkosp_begin_parallel_scan")),
        end_scan(symbol<Kokkos_Profiling_endFunction>(
            library, "kokkosp_end_parallel_scan")),
        sync(symbol<Kokkos_Profiling_dualViewSyncFunction>(
            library, "kokkosp_dual_view_sync")),
        modify(symbol<Kokkos_Profiling_dualViewModifyFunction>(
            library, "kokkosp_dual_view_modify")),
        metadata(symbol<Kokkos_Profiling_declareMetadataFunction>(
            library, "kokkosp_declare_metadata")) {}

  Kokkos_Profiling_initFunction init;
  Kokkos_Profiling_finalizeFunction finalize;
  Kokkos_Tools_requestToolSettingsFunction settings;
  Kokkos_Profiling_beginDeepCopyFunction begin_copy;
  Kokkos_Profiling_endDeepCopyFunction end_copy;
  Kokkos_Profiling_beginFenceFunction begin_fence;
  Kokkos_Profiling_endFenceFunction end_fence;
  Kokkos_Profiling_pushFunction push;
  Kokkos_Profiling_popFunction pop;
  Kokkos_Profiling_beginFunction begin_for;
  Kokkos_Profiling_endFunction end_for;
  Kokkos_Profiling_beginFunction begin_reduce;
  Kokkos_Profiling_endFunction end_reduce;
  Kokkos_Profiling_beginFunction begin_scan;
  Kokkos_Profiling_endFunction end_scan;
  Kokkos_Profiling_dualViewSyncFunction sync;
  Kokkos_Profiling_dualViewModifyFunction modify;
  Kokkos_Profiling_declareMetadataFunction metadata;

  void copy(const char* dst_space, const void* dst, const char* src_space,
            const void* src, const char* label, std::uint64_t bytes,
            bool fenced) const {
    begin_copy(space(dst_space), label, dst, space(src_space), label, src,
               bytes);
    if (fenced) {
      // Kokkos 4 fences a blocking copy inside begin/end_deep_copy.
      std::uint64_t handle = 0;
      begin_fence("Kokkos::deep_copy: copy between contiguous views, post "
                  "deep copy fence",
                  0, &handle);
      end_fence(handle);
    }
    end_copy();
  }
};

alignas(256) char host_data[4096];
alignas(256) char device_data[4096];
alignas(256) char other_data[4096];

} // namespace

int main(int argc, char* argv[]) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <libkp_cunumpy.so> <expect fencing>\n",
                 argv[0]);
    return 2;
  }
  void* library = ::dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "plugin_entry_points: %s\n", ::dlerror());
    return 2;
  }
  const bool expect_fencing = std::atoi(argv[2]) != 0;
  const Plugin kp(library);

  // Before init nothing is recorded and nothing breaks.
  kp.copy("Cuda", device_data, "Host", host_data, "early", 8, false);
  kp.pop();

  kp.init(0, KOKKOSP_INTERFACE_VERSION, 0, nullptr);
  Kokkos_Tools_ToolSettings settings{};
  settings.requires_global_fencing = true; // what Kokkos passes
  kp.settings(1, &settings);
  check(settings.requires_global_fencing == expect_fencing,
        "requires_global_fencing: cunumpy asks for none; a next tool that "
        "does not ask keeps Kokkos' default");
  kp.metadata("entry_points", "yes");

  kp.push("step");
  kp.copy("Cuda", device_data, "Host", host_data, "state", 800, true);
  // Fences of a Cuda instance: Kokkos 4 puts the execution space type in the
  // top 8 bits of the device id (2 is Cuda) and the instance below. On a
  // device build the plugin ignores fences of host execution spaces (type 0
  // is Serial), so device id 0 would not do.
  constexpr std::uint32_t cuda_instance = (2u << 24) | 1u;
  std::uint64_t fence = 0;
  kp.begin_fence("Kokkos::Cuda::fence: Unnamed Instance Fence", cuda_instance,
                 &fence);
  kp.end_fence(fence);
  kp.begin_fence("Kokkos::View::operator(): copy into scalar fence",
                 cuda_instance, &fence);
  kp.end_fence(fence);
  std::uint64_t kernel = 0;
  kp.begin_for("step::advance", 0, &kernel);
  kp.end_for(kernel);
  kp.begin_reduce("step::norm", 0, &kernel);
  kp.end_reduce(kernel);
  kp.begin_scan("step::scan", 0, &kernel);
  kp.end_scan(kernel);
  kp.pop();

  kp.push("outer");
  kp.push("inner");
  kp.copy("Host", host_data, "Cuda", device_data, "result", 64, true);
  kp.pop();
  kp.pop();

  // DualView: a modify on the host, then the sync to the device copies it
  // (Kokkos reports both sides 128 bytes before their data).
  kp.push("dual");
  kp.modify("field_mirror", host_data + 128 - 128, false);
  kp.copy("Cuda", device_data + 128, "Host", host_data + 128, "field", 256,
          true);
  kp.sync("field", device_data + 128 - 128, true);
  kp.sync("constant", other_data, false); // copied nothing
  kp.modify("forgotten", other_data + 1024, true);
  kp.pop();

  // An unfenced copy (asynchronous on Kokkos 4), outside any region.
  kp.copy("Cuda", device_data, "Host", host_data, "async", 16, false);

  // Unbalanced and malformed calls: ignored, never a crash.
  kp.end_copy();
  kp.end_fence(12345);
  kp.end_for(999);
  kp.pop();
  Kokkos_Profiling_SpaceHandle unterminated;
  std::memset(unterminated.name, 'X', sizeof unterminated.name);
  kp.begin_copy(unterminated, nullptr, nullptr, unterminated, nullptr, nullptr,
                0);
  kp.end_copy();
  kp.push(nullptr);
  kp.pop();

  kp.finalize();
  // After finalize: ignored.
  kp.copy("Cuda", device_data, "Host", host_data, "late", 8, false);
  kp.finalize();

  if (failures != 0)
    return 1;
  std::printf("plugin_entry_points: ok\n");
  return 0;
}
