// libkp_cunumpy: cunumpy's transfer accounting for any Kokkos program,
// loaded at run time (KOKKOS_TOOLS_LIBS, or KOKKOS_PROFILE_LIBRARY on Kokkos
// 3.x). Each event entry point is one line into the one Kokkos Tools event
// path of the library (src/core/tools/callbacks.hpp), which feeds the
// recorder and forwards to the next tool of the list; the entry points of a
// tool's life (init, finalize, settings, arguments, help, metadata) are
// here. The consumers (budget, report, trace) live in the one Plugin object,
// created at init and destroyed at finalize.
//
// The library is linked with -Bsymbolic: its own kokkosp_* functions are
// its own even when a tool loaded before it (RTLD_GLOBAL) exports the same
// names. No entry point throws or lets an exception cross into Kokkos.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <unistd.h>

#include <cunumpy/impl/api_scope.hpp>

#include "plugin.hpp"
#include "recorder/recorder.hpp"
#include "recorder/recording.hpp"
#include "support/environment.hpp"
#include "support/identity.hpp"
#include "support/variables.hpp"
#include "tools/callbacks.hpp"
#include "tools/kokkosp.hpp"

#define CUNUMPY_PLUGIN_EXPORT __attribute__((visibility("default")))

namespace callback = cunumpy::Impl::tools::callback;
namespace kokkosp = cunumpy::Impl::kokkosp;
namespace recording = cunumpy::Impl::recording;

namespace cunumpy::plugin {
namespace {

/// The plugin's state across its life and the end of the process, in one
/// place. The plugin is made by the first kokkosp_init_library and never
/// deleted: other threads may still be in Kokkos callbacks when the process
/// ends, and a Kokkos session it was not told of may still need its report
/// rewritten.
struct Lifetime {
  std::atomic<Plugin*> plugin{nullptr};
  /// The status the process ends with when it would otherwise end with 0.
  std::atomic<int> pending_exit_status{0};
  std::atomic<bool> exit_handler_ran{false};
  /// The status the exit handler was told (unknown for quick_exit).
  std::optional<int> exit_status;
  /// kokkosp_init_library is running (a tool that calls it again from its
  /// own init must not make a second plugin).
  std::atomic<bool> initializing{false};
  /// The process that made the plugin: a forked child's report is its
  /// parent's.
  pid_t owner = 0;
};

Lifetime& lifetime() {
  static Lifetime* state = new Lifetime(); // used until the process ends
  return *state;
}

Plugin* current() noexcept {
  return lifetime().plugin.load(std::memory_order_acquire);
}

/// The plugin's start: the recorder it hands to the Plugin and the tools
/// layer.
Impl::Recorder& the_recorder() {
  return Impl::Recorder::instance();
}

/// An address inside this library that no other library can stand for: the
/// plugin finds its own file, and its place in the tools list, with it.
void self_address() {}

/// Ends the process with the violation status when the budget failed under
/// CUNUMPY_ON_VIOLATION=exit and the program would end with 0 (`status`;
/// unknown for quick_exit, which tells its handlers nothing): only then
/// does cunumpy say what the status is, as only then does it decide it.
void end_process_if_failed(std::optional<int> status) noexcept {
  const int pending = lifetime().pending_exit_status.load();
  if (pending == 0 || (status && *status != 0))
    return;
  std::fprintf(stderr,
               "cunumpy: CUNUMPY_ON_VIOLATION=exit: the budget failed, so the "
               "process ends with status %d%s\n",
               pending,
               status ? " instead of 0"
                      : " (quick_exit does not tell cunumpy its own)");
  std::fflush(nullptr);
  std::_Exit(pending);
}

/// Ends the plugin: the next tool's finalize first (its files are written
/// then), then cunumpy's report and trace, which are never overwritten by
/// another tool's files. Notes the violation status to end with, when
/// CUNUMPY_ON_VIOLATION=exit and the budget failed.
void finish(Plugin& plugin) {
  plugin.finalize_next();
  if (plugin.finish() && plugin.config().exit_on_violation)
    lifetime().pending_exit_status.store(violation_exit_status);
}

/// At the process' end: writes the report of a program that never called
/// Kokkos::finalize, or writes it again when Kokkos ran a session the
/// plugin was not told of; then the violation status, if any.
void at_process_end(std::optional<int> status) noexcept {
  Lifetime& state = lifetime();
  if (state.exit_handler_ran.exchange(true))
    return;
  state.exit_status = status;
  if (::getpid() != state.owner)
    return; // a forked child: the report is its parent's
  try {
    if (Plugin* plugin = current()) {
      if (!plugin->finished())
        finish(*plugin);
      else if (plugin->reconsider() && plugin->config().exit_on_violation)
        state.pending_exit_status.store(violation_exit_status);
    }
  } catch (...) {
  }
  end_process_if_failed(status);
}

void on_process_exit(int status, void*) noexcept {
  at_process_end(status);
}

void on_quick_exit() noexcept {
  at_process_end(std::nullopt);
}

#if defined(__GLIBC__)
void register_exit_handlers() {
  ::on_exit(&on_process_exit, nullptr);
  std::at_quick_exit(&on_quick_exit);
}
#else
void on_process_exit_without_status() {
  at_process_end(std::nullopt);
}
void register_exit_handlers() {
  std::atexit(&on_process_exit_without_status);
  std::at_quick_exit(&on_quick_exit);
}
#endif

/// Kokkos' fence for tools (the tool programming interface), which
/// debug-sync mode calls after every kernel.
std::atomic<kokkosp::ToolInvokedFenceFunction> kokkos_fence{nullptr};

void fence_for_debug_sync() {
  if (const auto fence = kokkos_fence.load(std::memory_order_acquire)) {
    // What Kokkos reports inside its fence is recorded inside it.
    recording::Line("tool_fence").write();
    const recording::Nested nested;
    fence(0);
  }
}

void report_internal_error(const char* where) noexcept {
  Impl::warn(std::string("internal error in ") + where +
             "; the program continues");
}

} // namespace
} // namespace cunumpy::plugin

using cunumpy::plugin::current;
using cunumpy::plugin::Plugin;

namespace cunumpy::plugin {

// The callback an entry point calls: the one of its slot, except that those
// whose Kokkos signature takes space handles by value go to their
// by-reference forms (no copy of the handles onto the stack).
template <auto callback> struct Target {
  static constexpr auto function = callback;
};
template <> struct Target<&callback::begin_deep_copy> {
  static constexpr auto function = &callback::begin_deep_copy_by_reference;
};
template <> struct Target<&callback::allocate_data> {
  static constexpr auto function = &callback::allocate_data_by_reference;
};
template <> struct Target<&callback::deallocate_data> {
  static constexpr auto function = &callback::deallocate_data_by_reference;
};
// Where the entry points go: the event path's callbacks in libcunumpy, read
// from this table rather than a GOT entry each. The callbacks of a time
// step (kernels, regions, copies, fences; the slots' order) share its first
// cache line, which after a step that streams more than the caches is one
// miss instead of about eight, one per GOT line. Filled by the loader's
// relocations. Not const, and not in an unnamed namespace: the compiler
// would call the functions directly (through the GOT) instead of reading
// the table.
struct alignas(64) Callbacks {
#define CUNUMPY_PLUGIN_FIELD(name, type, entry)                                \
  std::remove_const_t<decltype(Target<&callback::name>::function)> name;
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_PLUGIN_FIELD)
#undef CUNUMPY_PLUGIN_FIELD
};
Callbacks core_callbacks{
#define CUNUMPY_PLUGIN_TARGET(name, type, entry)                               \
  Target<&callback::name>::function,
    CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_PLUGIN_TARGET)
#undef CUNUMPY_PLUGIN_TARGET
};

// CUNUMPY_RECORD: each slot of core_callbacks calls a wrapper that writes
// the event's line, then the callback, the events it causes nested in it.
// Off, the table is as the loader filled it: the entry points pay nothing.
namespace {

using Impl::tools::Slot;

std::string_view space_name(const kokkosp::SpaceHandle& space) {
  return {space.name, ::strnlen(space.name, sizeof space.name)};
}

// The fields of each kind of event, by the callback's signature.
void describe(recording::Line& line, Slot, const char* name,
              std::uint32_t device, std::uint64_t*) {
  line.text("name", name).number("device", device);
}
void describe(recording::Line& line, Slot, std::uint64_t id) {
  line.number("id", id);
}
void describe(recording::Line& line, Slot, const char* name) {
  line.text("name", name);
}
void describe(recording::Line&, Slot) {}
void describe(recording::Line& line, Slot slot,
              const kokkosp::SpaceHandle& space, const char* label,
              const void* ptr, std::uint64_t size) {
  line.text("space", space_name(space))
      .text("label", label)
      .allocation("ptr", ptr, size, slot == Slot::deallocate_data)
      .number("size", size);
}
void describe(recording::Line& line, Slot, const kokkosp::SpaceHandle& dst,
              const char* dst_label, const void* dst_ptr,
              const kokkosp::SpaceHandle& src, const char* src_label,
              const void* src_ptr, std::uint64_t size) {
  line.text("dst_space", space_name(dst))
      .text("dst_label", dst_label)
      .pointer("dst_ptr", dst_ptr)
      .text("src_space", space_name(src))
      .text("src_label", src_label)
      .pointer("src_ptr", src_ptr)
      .number("size", size);
}
void describe(recording::Line& line, Slot slot, const char* label,
              const void* ptr, bool flag) {
  line.text("label", label)
      .pointer("ptr", ptr)
      .boolean(slot == Slot::sync_dual_view ? "to_device" : "on_device", flag);
}
void describe(recording::Line& line, Slot, const char* name, std::uint32_t*) {
  line.text("name", name);
}
void describe(recording::Line& line, Slot, std::uint32_t id) {
  line.number("id", id);
}

template <Slot slot, auto target> struct Recorded;
template <Slot slot, class... Args, void (*target)(Args...)>
struct Recorded<slot, target> {
  static void call(Args... args) {
    // From before its line: a process that ends once the line is written
    // and before cunumpy took the input in has a recording with no end line.
    const recording::Inside inside;
    if (recording::active()) {
      recording::Line line(Impl::tools::slot_name(slot));
      describe(line, slot, args...);
      line.write();
    }
    const recording::Nested nested;
    target(args...);
  }
};

} // namespace

/// Routes every event slot through its recording wrapper (before any event
/// of the run).
void record_events() noexcept {
#define CUNUMPY_PLUGIN_RECORDED(name, type, entry)                             \
  core_callbacks.name =                                                        \
      &Recorded<Slot::name, Target<&callback::name>::function>::call;
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_PLUGIN_RECORDED)
#undef CUNUMPY_PLUGIN_RECORDED
}

} // namespace cunumpy::plugin

using cunumpy::plugin::core_callbacks;

namespace cunumpy::plugin {
namespace {

/// The core the process loaded is another build than this plugin's
/// (support/identity.hpp): nothing of it may be called. Read by another
/// cunumpy of the process too (kokkosp_cunumpy_inert).
std::atomic<bool> core_refused{false};

/// A callback that does nothing, of the type `Function`.
template <class Function> struct Ignore;
template <class Result, class... Arguments>
struct Ignore<Result (*)(Arguments...) noexcept> {
  static Result call(Arguments...) noexcept { return Result(); }
};
template <class Result, class... Arguments>
struct Ignore<Result (*)(Arguments...)> {
  static Result call(Arguments...) noexcept { return Result(); }
};

/// Refuses the core the process loaded: every event goes nowhere, the
/// reason is said once, and the run does not pass (with
/// CUNUMPY_ON_VIOLATION=exit, a process that would end with 0 ends with
/// the violation status). Calls nothing of the core.
void refuse_core(const std::string& why) noexcept {
  core_refused.store(true);
#define CUNUMPY_PLUGIN_IGNORE(name, type, entry)                               \
  core_callbacks.name = &Ignore<decltype(core_callbacks.name)>::call;
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_PLUGIN_IGNORE)
#undef CUNUMPY_PLUGIN_IGNORE
  std::fprintf(stderr,
               "cunumpy: error: %s; cunumpy records nothing in this "
               "run\n",
               why.c_str());
  const char* on_violation = std::getenv("CUNUMPY_ON_VIOLATION");
  if (on_violation == nullptr || std::strcmp(on_violation, "exit") != 0)
    return;
  Lifetime& state = lifetime();
  state.pending_exit_status.store(violation_exit_status);
  if (state.owner == 0) {
    state.owner = ::getpid();
    register_exit_handlers();
  }
}

} // namespace
} // namespace cunumpy::plugin

extern "C" {

/// Marks this library as cunumpy's plugin, so that a copy of it later in a
/// tools list is not loaded as a next tool.
CUNUMPY_PLUGIN_EXPORT extern const int kokkosp_cunumpy_plugin;
const int kokkosp_cunumpy_plugin = 1;

/// The build of the plugin (support/identity.hpp), for another cunumpy of
/// the process that finds this plugin in Kokkos' table.
CUNUMPY_PLUGIN_EXPORT extern const char* const kokkosp_cunumpy_identity;
const char* const kokkosp_cunumpy_identity = CUNUMPY_BUILD_IDENTITY;

/// Whether the plugin refused the core it was given and records nothing:
/// then another cunumpy of the process records in its place.
CUNUMPY_PLUGIN_EXPORT bool kokkosp_cunumpy_inert() noexcept {
  return cunumpy::plugin::core_refused.load();
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_init_library(const int load_sequence, const uint64_t interface_version,
                     const uint32_t device_count,
                     kokkosp::DeviceInfo* devices) noexcept {
  using namespace cunumpy::plugin;
  Lifetime& state = lifetime();
  if (state.initializing.exchange(true) || core_refused.load())
    return; // a tool that calls it again from its own init
  // The core the loader gave this plugin is the one it was built with, or
  // nothing of it is used.
  try {
    if (const std::string mismatch = cunumpy::Impl::core_mismatch(
            "the plugin", reinterpret_cast<const void*>(&self_address));
        !mismatch.empty()) {
      refuse_core(mismatch);
      state.initializing.store(false);
      return;
    }
  } catch (...) {
  }
  // The plugin's frames are never a call site, whatever its file is called.
  cunumpy::Impl::note_own_module(reinterpret_cast<const void*>(&self_address));
  try {
    if (Plugin* plugin = current()) {
      // Another Kokkos of the process (each Python extension with Kokkos
      // linked in has its own), or a Kokkos session that restarted its
      // tools: one report for all of them.
      cunumpy::plugin::record_init(load_sequence, interface_version,
                                   device_count, devices);
      const recording::Nested nested;
      plugin->start_session(interface_version);
    } else {
      auto* made = new Plugin(the_recorder(), load_sequence, interface_version,
                              device_count, devices,
                              reinterpret_cast<const void*>(&self_address),
                              __builtin_return_address(0));
      if (recording::active())
        record_events();
      state.plugin.store(made, std::memory_order_release);
      if (state.owner == 0) {
        state.owner = ::getpid();
        // After the next tool is loaded, so these run before its static
        // destructors.
        register_exit_handlers();
      }
    }
  } catch (const std::exception& error) {
    cunumpy::Impl::warn(std::string("the plugin is disabled: ") + error.what());
  } catch (...) {
    report_internal_error("kokkosp_init_library");
  }
  state.initializing.store(false);
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_finalize_library() noexcept {
  using namespace cunumpy::plugin;
  Lifetime& state = lifetime();
  if (core_refused.load())
    return; // nothing of the core may be called
  try {
    if (::getpid() != state.owner) {
      // A forked child that finalizes Kokkos: the report and the trace are
      // its parent's. The next tool still gets its finalize.
      if (Plugin* plugin = current())
        plugin->finalize_next();
      return;
    }
    recording::Line("finalize").write();
    const recording::Nested nested;
    Plugin* plugin = current();
    if (plugin == nullptr || !plugin->end_session())
      return; // another Kokkos of the process still runs
    // Let the program finish (MPI_Finalize, its own output); the exit
    // handler sets the status. Finalized from a static destructor, after
    // that handler ran: there is no status left to know.
    finish(*plugin);
    if (state.exit_handler_ran.load())
      end_process_if_failed(state.exit_status);
  } catch (...) {
    report_internal_error("kokkosp_finalize_library");
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_request_tool_settings(const uint32_t num_actions,
                              kokkosp::ToolSettings* settings) noexcept {
  try {
    if (settings == nullptr || num_actions == 0)
      return;
    // cunumpy needs no global fences. A next tool gets what it asks for, or
    // what Kokkos gives a tool that does not ask.
    bool fencing = false;
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().loaded()) {
      const auto request = plugin->next().callbacks.request_tool_settings;
      if (request != nullptr) {
        kokkosp::ToolSettings requested = *settings;
        request(num_actions, &requested);
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
    kokkosp::ToolProgrammingInterface interface) noexcept {
  try {
    using namespace cunumpy::plugin;
    if (core_refused.load())
      return;
    if (recording::active())
      recording::Line("provide_tool_programming_interface")
          .number("functions", num_functions)
          .boolean("fence", interface.fence != nullptr)
          .write();
    if (num_functions > 0 && interface.fence != nullptr) {
      kokkos_fence.store(interface.fence, std::memory_order_release);
      the_recorder().set_device_fence(&fence_for_debug_sync);
    }
    const Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    const auto next =
        plugin->next().callbacks.provide_tool_programming_interface;
    if (next != nullptr)
      next(num_functions, interface);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_parse_args(int argc, char** argv) noexcept {
  try {
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().callbacks.parse_args != nullptr)
      plugin->next().callbacks.parse_args(argc, argv);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void kokkosp_print_help(char* program) noexcept {
  try {
    if (cunumpy::plugin::core_refused.load())
      return;
    std::printf("libkp_cunumpy: cunumpy's host/device transfer report, "
                "configured by these variables (docs/plugin.md):\n%s",
                cunumpy::Impl::variables_help().c_str());
    const Plugin* plugin = current();
    if (plugin != nullptr && plugin->next().callbacks.print_help != nullptr)
      plugin->next().callbacks.print_help(program);
  } catch (...) {
  }
}

CUNUMPY_PLUGIN_EXPORT void
kokkosp_declare_metadata(const char* key, const char* value) noexcept {
  try {
    Plugin* plugin = current();
    if (plugin == nullptr)
      return;
    if (recording::active())
      recording::Line("declare_metadata")
          .text("key", key)
          .text("value", value)
          .write();
    plugin->declare_metadata(key, value);
    if (plugin->next().callbacks.declare_metadata != nullptr)
      plugin->next().callbacks.declare_metadata(key, value);
  } catch (...) {
  }
}

// The events: one line each into the one event path, which never throws.

CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_parallel_for(const char* name,
                                                      const uint32_t device,
                                                      uint64_t* id) noexcept {
  core_callbacks.begin_parallel_for(name, device, id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_end_parallel_for(const uint64_t id) noexcept {
  core_callbacks.end_parallel_for(id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_begin_parallel_reduce(const char* name, const uint32_t device,
                              uint64_t* id) noexcept {
  core_callbacks.begin_parallel_reduce(name, device, id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_end_parallel_reduce(const uint64_t id) noexcept {
  core_callbacks.end_parallel_reduce(id);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_parallel_scan(const char* name,
                                                       const uint32_t device,
                                                       uint64_t* id) noexcept {
  core_callbacks.begin_parallel_scan(name, device, id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_end_parallel_scan(const uint64_t id) noexcept {
  core_callbacks.end_parallel_scan(id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_push_profile_region(const char* name) noexcept {
  core_callbacks.push_region(name);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_pop_profile_region() noexcept {
  core_callbacks.pop_region();
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_allocate_data(const kokkosp::SpaceHandle space, const char* label,
                      const void* const ptr, const uint64_t size) noexcept {
  core_callbacks.allocate_data(space, label, ptr, size);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_deallocate_data(const kokkosp::SpaceHandle space, const char* label,
                        const void* const ptr, const uint64_t size) noexcept {
  core_callbacks.deallocate_data(space, label, ptr, size);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_create_profile_section(const char* name, uint32_t* id) noexcept {
  core_callbacks.create_profile_section(name, id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_start_profile_section(const uint32_t id) noexcept {
  core_callbacks.start_profile_section(id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_stop_profile_section(const uint32_t id) noexcept {
  core_callbacks.stop_profile_section(id);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_destroy_profile_section(const uint32_t id) noexcept {
  core_callbacks.destroy_profile_section(id);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_profile_event(const char* name) noexcept {
  core_callbacks.profile_event(name);
}
CUNUMPY_PLUGIN_EXPORT void
kokkosp_begin_deep_copy(kokkosp::SpaceHandle dst_handle, const char* dst_name,
                        const void* dst_ptr, kokkosp::SpaceHandle src_handle,
                        const char* src_name, const void* src_ptr,
                        uint64_t size) noexcept {
  core_callbacks.begin_deep_copy(dst_handle, dst_name, dst_ptr, src_handle,
                                 src_name, src_ptr, size);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_end_deep_copy() noexcept {
  core_callbacks.end_deep_copy();
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_begin_fence(const char* name,
                                               const uint32_t device_id,
                                               uint64_t* handle) noexcept {
  core_callbacks.begin_fence(name, device_id, handle);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_end_fence(const uint64_t handle) noexcept {
  core_callbacks.end_fence(handle);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_dual_view_sync(const char* label,
                                                  const void* const ptr,
                                                  bool to_device) noexcept {
  core_callbacks.sync_dual_view(label, ptr, to_device);
}
CUNUMPY_PLUGIN_EXPORT void kokkosp_dual_view_modify(const char* label,
                                                    const void* const ptr,
                                                    bool on_device) noexcept {
  core_callbacks.modify_dual_view(label, ptr, on_device);
}

} // extern "C"

namespace cunumpy::plugin {

kokkosp::EventSet entry_points() noexcept {
  kokkosp::EventSet table{};
#define CUNUMPY_PLUGIN_ENTRY(name, type, entry) table.name = &entry;
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_PLUGIN_ENTRY)
  CUNUMPY_TOOLS_LIFECYCLE_SLOTS(CUNUMPY_PLUGIN_ENTRY)
#undef CUNUMPY_PLUGIN_ENTRY
  return table;
}

} // namespace cunumpy::plugin
