#ifndef CUNUMPY_PLUGIN_NEXT_TOOL_HPP
#define CUNUMPY_PLUGIN_NEXT_TOOL_HPP

// The Kokkos Tools library after libkp_cunumpy in a ';'-separated
// KOKKOS_TOOLS_LIBS list: Kokkos loads only the first entry, so the plugin
// loads the next one and forwards every callback to it.

#include <string>

#include <impl/Kokkos_Profiling_C_Interface.h>

namespace cunumpy::plugin {

/// The callbacks of the next tool; a null pointer is a callback the tool
/// does not export.
struct NextTool {
  std::string path;
  Kokkos_Profiling_initFunction init = nullptr;
  Kokkos_Profiling_finalizeFunction finalize = nullptr;
  Kokkos_Profiling_parseArgsFunction parse_args = nullptr;
  Kokkos_Profiling_printHelpFunction print_help = nullptr;
  Kokkos_Profiling_beginFunction begin_parallel_for = nullptr;
  Kokkos_Profiling_endFunction end_parallel_for = nullptr;
  Kokkos_Profiling_beginFunction begin_parallel_reduce = nullptr;
  Kokkos_Profiling_endFunction end_parallel_reduce = nullptr;
  Kokkos_Profiling_beginFunction begin_parallel_scan = nullptr;
  Kokkos_Profiling_endFunction end_parallel_scan = nullptr;
  Kokkos_Profiling_pushFunction push_region = nullptr;
  Kokkos_Profiling_popFunction pop_region = nullptr;
  Kokkos_Profiling_allocateDataFunction allocate_data = nullptr;
  Kokkos_Profiling_deallocateDataFunction deallocate_data = nullptr;
  Kokkos_Profiling_createProfileSectionFunction create_profile_section =
      nullptr;
  Kokkos_Profiling_startProfileSectionFunction start_profile_section = nullptr;
  Kokkos_Profiling_stopProfileSectionFunction stop_profile_section = nullptr;
  Kokkos_Profiling_destroyProfileSectionFunction destroy_profile_section =
      nullptr;
  Kokkos_Profiling_profileEventFunction profile_event = nullptr;
  Kokkos_Profiling_beginDeepCopyFunction begin_deep_copy = nullptr;
  Kokkos_Profiling_endDeepCopyFunction end_deep_copy = nullptr;
  Kokkos_Profiling_beginFenceFunction begin_fence = nullptr;
  Kokkos_Profiling_endFenceFunction end_fence = nullptr;
  Kokkos_Profiling_dualViewSyncFunction sync_dual_view = nullptr;
  Kokkos_Profiling_dualViewModifyFunction modify_dual_view = nullptr;
  Kokkos_Profiling_declareMetadataFunction declare_metadata = nullptr;
  Kokkos_Tools_provideToolProgrammingInterfaceFunction
      provide_tool_programming_interface = nullptr;
  Kokkos_Tools_requestToolSettingsFunction request_tool_settings = nullptr;

  bool loaded() const noexcept { return !path.empty(); }
};

/// The path listed after this library in KOKKOS_TOOLS_LIBS (read first) or
/// KOKKOS_PROFILE_LIBRARY, or "" when there is none. `self` is an address
/// inside this library, to find its own entry in the list.
std::string next_tool_path(const void* self);

/// Loads the tool at `path`. Prints one line and returns an empty NextTool
/// when it cannot be loaded or is this library again.
NextTool load_next_tool(const std::string& path, const void* self);

} // namespace cunumpy::plugin

#endif
