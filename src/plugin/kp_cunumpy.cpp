// libkp_cunumpy: cunumpy's transfer accounting for any Kokkos program,
// loaded at run time (KOKKOS_TOOLS_LIBS, or KOKKOS_PROFILE_LIBRARY on Kokkos
// 3.x). Every callback feeds cunumpy's one recorder, exactly as the
// in-process hooks of the library do, then goes on to the next tool of the
// list. The consumers (budget with regions as phases, report, trace) live in
// the one Plugin object, created at init and destroyed at finalize.
//
// No callback throws or lets an exception cross into Kokkos.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <impl/Kokkos_Profiling_C_Interface.h>

#include "support/environment.hpp"
#include "plugin.hpp"
#include "recorder/recorder.hpp"

#define CUNUMPY_PLUGIN_EXPORT __attribute__((visibility("default")))

namespace cunumpy::plugin {
namespace {

std::atomic<Plugin*> current_plugin{nullptr};
/// The status the process ends with when it would otherwise end with 0.
std::atomic<int> pending_exit_status{0};
std::atomic<bool> exit_handler_ran{false};
pid_t owner_pid = 0;

Plugin* current() noexcept {
  return current_plugin.load(std::memory_order_acquire);
}

static_assert(sizeof(Kokkos_Profiling_SpaceHandle::name) == 64,
              "feed:: reads space names as Kokkos' 64-byte arrays");

void end_process_if_failed(int status) noexcept {
  const int pending = pending_exit_status.load();
  if (pending != 0 && status == 0) {
    std::fflush(nullptr);
    std::_Exit(pending);
  }
}

/// Runs when the process exits: writes the report of a program that never
/// called Kokkos::finalize, and ends with the violation status when
/// CUNUMPY_ON_VIOLATION=exit and a rule was broken (unless the program
/// already ends with a non-zero status of its own).
void on_process_exit(int status, void*) noexcept {
  exit_handler_ran.store(true);
  if (::getpid() != owner_pid)
    return; // a forked child: the report is its parent's
  try {
    if (Plugin* plugin = current_plugin.exchange(nullptr)) {
      const bool failed = plugin->finish();
      if (plugin->next().finalize != nullptr)
        plugin->next().finalize();
      if (failed && plugin->config().exit_on_violation)
        pending_exit_status.store(violation_exit_status);
      // Not deleted: other threads may still be in Kokkos callbacks.
    }
  } catch (...) {
  }
  end_process_if_failed(status);
}

#if defined(__GLIBC__)
void register_exit_handler() {
  ::on_exit(&on_process_exit, nullptr);
}
#else
void on_process_exit_without_status() {
  on_process_exit(0, nullptr);
}
void register_exit_handler() {
  std::atexit(&on_process_exit_without_status);
}
#endif

void report_internal_error(const char* where) noexcept {
  Impl::warn(std::string("internal error in ") + where +
             "; the program continues");
}

} // namespace
} // namespace cunumpy::plugin

// Kernels: timed for the trace, forwarded with the next tool's ids.
namespace cunumpy::plugin {
namespace {

using BeginKernel = Kokkos_Profiling_beginFunction NextTool::*;
using EndKernel = Kokkos_Profiling_endFunction NextTool::*;

void begin_kernel(BeginKernel next, const char* name, uint32_t device_id,
                  uint64_t* id) noexcept {
  try {
    Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    if (plugin->next().*next != nullptr)
      (plugin->next().*next)(name, device_id, id);
    if (plugin->tracing())
      plugin->begin_kernel(name);
  } catch (...) {
  }
}

void end_kernel(EndKernel next, uint64_t id) noexcept {
  try {
    Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    if (plugin->tracing())
      plugin->end_kernel();
    if (plugin->next().*next != nullptr)
      (plugin->next().*next)(id);
  } catch (...) {
  }
}

} // namespace
} // namespace cunumpy::plugin

using cunumpy::plugin::current;
using cunumpy::plugin::Plugin;
namespace feed = cunumpy::Impl::feed;

extern "C" {

CUNUMPY_PLUGIN_EXPORT void
kokkosp_init_library(const int load_sequence, const uint64_t interface_version,
                     const uint32_t device_count,
                     Kokkos_Profiling_KokkosPDeviceInfo* devices) noexcept {
  using namespace cunumpy::plugin;
  try {
    if (current() != nullptr)
      return;
    auto* plugin =
        new Plugin(load_sequence, interface_version, device_count, devices,
                   reinterpret_cast<const void*>(&kokkosp_init_library));
    current_plugin.store(plugin, std::memory_order_release);
    if (owner_pid == 0) {
      owner_pid = ::getpid();
      // After the next tool is loaded, so this runs before its static
      // destructors.
      register_exit_handler();
    }
  } catch (const std::exception& error) {
    cunumpy::Impl::warn(std::string("the plugin is disabled: ") + error.what());
  } catch (...) {
    report_internal_error("kokkosp_init_library");
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_finalize_library() noexcept {
  using namespace cunumpy::plugin;
  try {
    Plugin* plugin = current_plugin.exchange(nullptr);
    if (plugin == nullptr)
      return;
    const bool failed = plugin->finish();
    if (plugin->next().finalize != nullptr)
      plugin->next().finalize();
    const bool exit_on_violation = plugin->config().exit_on_violation;
    delete plugin;
    if (failed && exit_on_violation) {
      // Let the program finish (MPI_Finalize, its own output); the exit
      // handler sets the status. Finalized from a static destructor, after
      // that handler ran: end here.
      pending_exit_status.store(violation_exit_status);
      if (exit_handler_ran.load())
        end_process_if_failed(0);
    }
  } catch (...) {
    report_internal_error("kokkosp_finalize_library");
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_request_tool_settings(const uint32_t num_actions,
                              Kokkos_Tools_ToolSettings* settings) noexcept {
  try {
    if (settings == nullptr || num_actions == 0)
      return;
    // cunumpy needs no global fences. A next tool gets what it asks for, or
    // what Kokkos gives a tool that does not ask.
    bool fencing = false;
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().loaded()) {
      if (plugin->next().request_tool_settings != nullptr) {
        Kokkos_Tools_ToolSettings requested = *settings;
        plugin->next().request_tool_settings(num_actions, &requested);
        fencing = requested.requires_global_fencing;
      } else {
        fencing = settings->requires_global_fencing;
      }
    }
    settings->requires_global_fencing = fencing;
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_provide_tool_programming_interface(
    const uint32_t num_functions,
    Kokkos_Tools_ToolProgrammingInterface interface) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr &&
        plugin->next().provide_tool_programming_interface != nullptr)
      plugin->next().provide_tool_programming_interface(num_functions,
                                                        interface);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_parse_args(int argc, char** argv) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().parse_args != nullptr)
      plugin->next().parse_args(argc, argv);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_print_help(char* program) noexcept {
  try {
    std::printf(
        "libkp_cunumpy: cunumpy's host/device transfer report "
        "(docs/plugin.md)\n"
        "  CUNUMPY_REPORT=path       report file (.json: JSON; %%r: MPI rank)\n"
        "  CUNUMPY_BUDGET=file.toml  transfer rules per region, checked at "
        "exit\n"
        "  CUNUMPY_ON_VIOLATION=warn|exit  exit: status %d on a broken rule\n"
        "  CUNUMPY_TRACE=path.json   Chrome trace (Perfetto)\n"
        "  CUNUMPY_BACKTRACE=depth   stack depth for call sites (0: off)\n"
        "  CUNUMPY_DEVICE_SPACES=a,b more device memory space names\n",
        cunumpy::plugin::violation_exit_status);
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().print_help != nullptr)
      plugin->next().print_help(program);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_deep_copy(
    Kokkos_Profiling_SpaceHandle dst_handle, const char* dst_name,
    const void* dst_ptr, Kokkos_Profiling_SpaceHandle src_handle,
    const char* src_name, const void* src_ptr, uint64_t size) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    if (plugin->next().begin_deep_copy != nullptr)
      plugin->next().begin_deep_copy(dst_handle, dst_name, dst_ptr, src_handle,
                                     src_name, src_ptr, size);
    feed::begin_deep_copy(dst_handle.name, dst_name, dst_ptr, src_handle.name,
                          src_name, src_ptr, size);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_end_deep_copy() noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    feed::end_deep_copy();
    if (plugin->next().end_deep_copy != nullptr)
      plugin->next().end_deep_copy();
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_fence(const char* name,
                                               const uint32_t device_id,
                                               uint64_t* handle) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    // The handle is the next tool's; cunumpy keeps a stack per thread.
    if (plugin->next().begin_fence != nullptr)
      plugin->next().begin_fence(name, device_id, handle);
    feed::begin_fence(name, device_id);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_end_fence(const uint64_t handle) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    feed::end_fence();
    if (plugin->next().end_fence != nullptr)
      plugin->next().end_fence(handle);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_push_profile_region(const char* name) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    feed::push_region(name);
    if (plugin->next().push_region != nullptr)
      plugin->next().push_region(name);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_pop_profile_region() noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    if (plugin->next().pop_region != nullptr)
      plugin->next().pop_region();
    feed::pop_region();
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_dual_view_sync(const char* label,
                                                  const void* const ptr,
                                                  bool to_device) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    feed::dual_view_sync(label, ptr, to_device);
    if (plugin->next().sync_dual_view != nullptr)
      plugin->next().sync_dual_view(label, ptr, to_device);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_dual_view_modify(const char* label,
                                                    const void* const ptr,
                                                    bool on_device) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    feed::dual_view_modify(label, ptr, on_device);
    if (plugin->next().modify_dual_view != nullptr)
      plugin->next().modify_dual_view(label, ptr, on_device);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_parallel_for(const char* name,
                                                      const uint32_t device_id,
                                                      uint64_t* id) noexcept {
  cunumpy::plugin::begin_kernel(&cunumpy::plugin::NextTool::begin_parallel_for,
                                name, device_id, id);
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_end_parallel_for(const uint64_t id) noexcept {
  cunumpy::plugin::end_kernel(&cunumpy::plugin::NextTool::end_parallel_for, id);
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_begin_parallel_reduce(const char* name, const uint32_t device_id,
                              uint64_t* id) noexcept {
  cunumpy::plugin::begin_kernel(
      &cunumpy::plugin::NextTool::begin_parallel_reduce, name, device_id, id);
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_end_parallel_reduce(const uint64_t id) noexcept {
  cunumpy::plugin::end_kernel(&cunumpy::plugin::NextTool::end_parallel_reduce,
                              id);
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_parallel_scan(const char* name,
                                                       const uint32_t device_id,
                                                       uint64_t* id) noexcept {
  cunumpy::plugin::begin_kernel(&cunumpy::plugin::NextTool::begin_parallel_scan,
                                name, device_id, id);
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_end_parallel_scan(const uint64_t id) noexcept {
  cunumpy::plugin::end_kernel(&cunumpy::plugin::NextTool::end_parallel_scan,
                              id);
}

// Forwarded only.

CUNUMPY_PLUGIN_EXPORT void
kokkosp_allocate_data(const Kokkos_Profiling_SpaceHandle space,
                      const char* label, const void* const ptr,
                      const uint64_t size) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().allocate_data != nullptr)
      plugin->next().allocate_data(space, label, ptr, size);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_deallocate_data(const Kokkos_Profiling_SpaceHandle space,
                        const char* label, const void* const ptr,
                        const uint64_t size) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().deallocate_data != nullptr)
      plugin->next().deallocate_data(space, label, ptr, size);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_create_profile_section(const char* name, uint32_t* id) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().create_profile_section != nullptr)
      plugin->next().create_profile_section(name, id);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_start_profile_section(const uint32_t id) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().start_profile_section != nullptr)
      plugin->next().start_profile_section(id);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_stop_profile_section(const uint32_t id) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().stop_profile_section != nullptr)
      plugin->next().stop_profile_section(id);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_destroy_profile_section(const uint32_t id) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().destroy_profile_section != nullptr)
      plugin->next().destroy_profile_section(id);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_profile_event(const char* name) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().profile_event != nullptr)
      plugin->next().profile_event(name);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_declare_metadata(const char* key, const char* value) noexcept {
  try {
    Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    plugin->declare_metadata(key, value);
    if (plugin->next().declare_metadata != nullptr)
      plugin->next().declare_metadata(key, value);
  } catch (...) {
  }
}

} // extern "C"

// Kokkos looks the entry points up by name and calls them through these
// pointer types: the signatures must be exactly Kokkos' own.
namespace cunumpy::plugin {
namespace {
[[maybe_unused]] constexpr Kokkos_Profiling_initFunction init_signature =
    &kokkosp_init_library;
[[maybe_unused]] constexpr Kokkos_Profiling_finalizeFunction
    finalize_signature = &kokkosp_finalize_library;
[[maybe_unused]] constexpr Kokkos_Tools_requestToolSettingsFunction
    settings_signature = &kokkosp_request_tool_settings;
[[maybe_unused]] constexpr Kokkos_Tools_provideToolProgrammingInterfaceFunction
    interface_signature = &kokkosp_provide_tool_programming_interface;
[[maybe_unused]] constexpr Kokkos_Profiling_parseArgsFunction
    parse_args_signature = &kokkosp_parse_args;
[[maybe_unused]] constexpr Kokkos_Profiling_printHelpFunction
    print_help_signature = &kokkosp_print_help;
[[maybe_unused]] constexpr Kokkos_Profiling_beginDeepCopyFunction
    begin_deep_copy_signature = &kokkosp_begin_deep_copy;
[[maybe_unused]] constexpr Kokkos_Profiling_endDeepCopyFunction
    end_deep_copy_signature = &kokkosp_end_deep_copy;
[[maybe_unused]] constexpr Kokkos_Profiling_beginFenceFunction
    begin_fence_signature = &kokkosp_begin_fence;
[[maybe_unused]] constexpr Kokkos_Profiling_endFenceFunction
    end_fence_signature = &kokkosp_end_fence;
[[maybe_unused]] constexpr Kokkos_Profiling_pushFunction push_signature =
    &kokkosp_push_profile_region;
[[maybe_unused]] constexpr Kokkos_Profiling_popFunction pop_signature =
    &kokkosp_pop_profile_region;
[[maybe_unused]] constexpr Kokkos_Profiling_dualViewSyncFunction
    sync_signature = &kokkosp_dual_view_sync;
[[maybe_unused]] constexpr Kokkos_Profiling_dualViewModifyFunction
    modify_signature = &kokkosp_dual_view_modify;
[[maybe_unused]] constexpr Kokkos_Profiling_beginFunction begin_for_signature =
    &kokkosp_begin_parallel_for;
[[maybe_unused]] constexpr Kokkos_Profiling_endFunction end_for_signature =
    &kokkosp_end_parallel_for;
[[maybe_unused]] constexpr Kokkos_Profiling_beginFunction
    begin_reduce_signature = &kokkosp_begin_parallel_reduce;
[[maybe_unused]] constexpr Kokkos_Profiling_endFunction end_reduce_signature =
    &kokkosp_end_parallel_reduce;
[[maybe_unused]] constexpr Kokkos_Profiling_beginFunction begin_scan_signature =
    &kokkosp_begin_parallel_scan;
[[maybe_unused]] constexpr Kokkos_Profiling_endFunction end_scan_signature =
    &kokkosp_end_parallel_scan;
[[maybe_unused]] constexpr Kokkos_Profiling_allocateDataFunction
    allocate_signature = &kokkosp_allocate_data;
[[maybe_unused]] constexpr Kokkos_Profiling_deallocateDataFunction
    deallocate_signature = &kokkosp_deallocate_data;
[[maybe_unused]] constexpr Kokkos_Profiling_createProfileSectionFunction
    create_section_signature = &kokkosp_create_profile_section;
[[maybe_unused]] constexpr Kokkos_Profiling_startProfileSectionFunction
    start_section_signature = &kokkosp_start_profile_section;
[[maybe_unused]] constexpr Kokkos_Profiling_stopProfileSectionFunction
    stop_section_signature = &kokkosp_stop_profile_section;
[[maybe_unused]] constexpr Kokkos_Profiling_destroyProfileSectionFunction
    destroy_section_signature = &kokkosp_destroy_profile_section;
[[maybe_unused]] constexpr Kokkos_Profiling_profileEventFunction
    event_signature = &kokkosp_profile_event;
[[maybe_unused]] constexpr Kokkos_Profiling_declareMetadataFunction
    metadata_signature = &kokkosp_declare_metadata;
} // namespace
} // namespace cunumpy::plugin
