// In-process installation of cunumpy's Kokkos Tools callbacks (the one
// event path of src/core/tools/callbacks.hpp), the part of the Kokkos-facing
// layer that connects the Kokkos-free core to the Kokkos this library is
// built with: the first time cunumpy is used, after Kokkos::initialize, the
// callbacks Kokkos held (a tool loaded through KOKKOS_TOOLS_LIBS, another
// in-process hook) become the next tool, and cunumpy's take their slots.

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>

#include "cuda/collector.hpp"
#include "recorder/recorder.hpp"
#include "recorder/thread_state.hpp"
#include "support/environment.hpp"
#include "support/identity.hpp"
#include "tools/callbacks.hpp"

namespace cunumpy::Impl {
namespace KT = Kokkos::Tools::Experimental;

namespace tools {
namespace {

// The core declares Kokkos' table itself (tools/kokkosp.hpp); this is where
// its layout is checked against a real Kokkos.
static_assert(sizeof(KT::EventSet) == sizeof(kokkosp::EventSet),
              "cunumpy's declaration of Kokkos' table has Kokkos' size");
static_assert(offsetof(KT::EventSet, begin_deep_copy) ==
                      offsetof(kokkosp::EventSet, begin_deep_copy) &&
                  offsetof(KT::EventSet, request_tool_settings) ==
                      offsetof(kokkosp::EventSet, request_tool_settings),
              "cunumpy's declaration of Kokkos' table has Kokkos' layout");
static_assert(sizeof(Kokkos::Tools::SpaceHandle) ==
                  sizeof(kokkosp::SpaceHandle),
              "record:: reads space names as Kokkos' 64-byte arrays");

bool get_table(kokkosp::EventSet& table) {
  const KT::EventSet live = KT::get_callbacks();
  std::memcpy(static_cast<void*>(&table), &live, sizeof table);
  return true;
}

bool set_table(const kokkosp::EventSet& table) {
  KT::EventSet live;
  std::memcpy(static_cast<void*>(&live), &table, sizeof live);
  KT::set_callbacks(live);
  return true;
}

/// The wait of debug-sync mode.
void fence_for_debug_sync() {
#if KOKKOS_VERSION >= 30500
  Kokkos::fence("cunumpy::debug_sync");
#else
  Kokkos::fence();
#endif
}

} // namespace

bool kokkos_runs() {
  return Kokkos::is_initialized();
}

TableAccess linked_kokkos_table() {
  return {&get_table, &set_table, &kokkos_runs};
}

} // namespace tools

namespace {

std::mutex install_mutex;

/// The Kokkos session the hooks were installed in has ended. Kokkos 3 may
/// be initialized again, and then calls no tool: the next cunumpy call
/// installs them again.
std::atomic<bool> session_ended{false};

/// The cunumpy plugin that holds `callback` of Kokkos' table, with its
/// build's identity in `identity`; empty when the callback is no cunumpy
/// plugin's.
std::string cunumpy_plugin_of(const void* callback, std::string& identity) {
  Dl_info info{};
  if (callback == nullptr || ::dladdr(callback, &info) == 0 ||
      info.dli_fname == nullptr)
    return {};
  void* handle = ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr)
    return {};
  const bool plugin = ::dlsym(handle, "kokkosp_cunumpy_plugin") != nullptr;
  const auto* named = static_cast<const char* const*>(
      ::dlsym(handle, "kokkosp_cunumpy_identity"));
  identity = named != nullptr && *named != nullptr ? *named : "";
  // A plugin that refused its core records nothing: another tool.
  const auto inert = reinterpret_cast<bool (*)() noexcept>(
      ::dlsym(handle, "kokkosp_cunumpy_inert"));
  const bool records = inert == nullptr || !inert();
  ::dlclose(handle);
  if (!plugin || !records)
    return {};
  return std::string(info.dli_fname) + " (cunumpy " +
         (identity.empty() ? std::string("of unknown identity") : identity) +
         ")";
}

/// The installer the core calls (Impl::ensure_hooks) before it counts.
void install_hooks(Recorder& recorder) {
  // The core the loader gave this library is the one it was built with
  // (support/identity.hpp), or nothing of it can be trusted.
  if (const std::string mismatch = core_mismatch(
          "the library", reinterpret_cast<const void*>(&install_hooks));
      !mismatch.empty())
    throw std::runtime_error("cunumpy: " + mismatch);
  std::atomic<bool>& installed = recorder.hooks_installed();
  if (installed.load(std::memory_order_acquire) &&
      !session_ended.load(std::memory_order_acquire))
    return;
  std::lock_guard lock(install_mutex);
  if (session_ended.load() && Kokkos::is_initialized() &&
      !recorder.fed_by_plugin()) {
    // A new session. Kokkos paused the tools at its finalize when a tool
    // library was loaded (its table is then empty): what the new session
    // did before this call reached no tool.
    session_ended = false;
    kokkosp::EventSet table{};
    tools::get_table(table);
    if (table.begin_deep_copy == nullptr && table.push_region == nullptr) {
      installed = false;
      tools::set_next(kokkosp::EventSet{});
      const RecorderLock lock = recorder.lock();
      recorder.open_incident(
          "Kokkos was initialized again after it finalized, and Kokkos "
          "restarts no tool for a second session: cunumpy put its callbacks "
          "back at the first cunumpy call of the new session, and what "
          "happened before it did not reach cunumpy",
          lock);
    } else {
      Kokkos::push_finalize_hook([] { session_ended = true; });
    }
  }
  if (installed.load(std::memory_order_relaxed))
    return;
  if (recorder.fed_by_plugin()) {
    installed.store(true, std::memory_order_release);
    return;
  }
  if (!Kokkos::is_initialized())
    throw std::runtime_error(
        "cunumpy: Kokkos is not initialized; call Kokkos::initialize (or "
        "create a Kokkos::ScopeGuard) before using cunumpy");
  recorder.set_kokkos_interface(KOKKOSP_INTERFACE_VERSION);
  // The thread that connects cunumpy to Kokkos: its regions place the
  // events of threads that opened none of their own.
  recorder.set_main_thread();
  recorder.set_default_device(Kokkos::DefaultExecutionSpace::name());
  tools::connect(recorder);
  const kokkosp::EventSet own = tools::own_callbacks();
  kokkosp::EventSet table{};
  tools::get_table(table);
  std::string identity;
  if (const std::string plugin = cunumpy_plugin_of(
          reinterpret_cast<const void*>(table.begin_deep_copy), identity);
      !plugin.empty()) {
    // A cunumpy plugin feeds a core of its own (another install's, of
    // another version, or linked statically): Kokkos' events go to it, and
    // recording them here too would count each twice.
    const std::string text =
        "this process has two cunumpy cores: the plugin " + plugin +
        " records Kokkos' events into its own, and this program's cunumpy, " +
        module_file(reinterpret_cast<const void*>(&install_hooks)) +
        " (cunumpy " + CUNUMPY_BUILD_IDENTITY + "), counts nothing: " +
        (identity == CUNUMPY_BUILD_IDENTITY
             ? "the same build is loaded twice (one links cunumpy "
               "statically, or was installed without its soname); link "
               "cunumpy shared (BUILD_SHARED_LIBS=ON), from one install"
             : "load the plugin of the install the program's cunumpy comes "
               "from (`python -m cunumpy.plugin` prints the pip install's), "
               "or install one version of cunumpy");
    warn(text);
    recorder.open_incident(text, recorder.lock(), true);
    installed.store(true, std::memory_order_release);
    return;
  }
  if (table.begin_deep_copy != own.begin_deep_copy) {
    // What Kokkos called until now is where cunumpy forwards; cunumpy takes
    // the slots it records, and leaves the others to their owners.
    tools::set_next(table);
    kokkosp::EventSet entries{};
#define CUNUMPY_TOOLS_TAKE(name, type, entry)                                  \
  if (tools::records_slot(tools::Slot::name)) {                                \
    table.name = own.name;                                                     \
    if (!tools::feeds_advice_only(tools::Slot::name))                          \
      entries.name = own.name;                                                 \
  }
    CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_TAKE)
#undef CUNUMPY_TOOLS_TAKE
    tools::set_table(table);
    tools::watch(tools::linked_kokkos_table(), entries, true);
    recorder.set_device_fence(&tools::fence_for_debug_sync);
  }
  // CUDA's own record of the copies Kokkos does not report.
  cuda::start_collector(recorder);
  Kokkos::push_finalize_hook([] { session_ended = true; });
  installed.store(true, std::memory_order_release);
}

/// cunumpy needs no global fences. Kokkos 3.5 and newer fence before and
/// after every kernel and region event while a tool takes them, unless the
/// tool says otherwise when Kokkos is initialized: without this, the
/// library's hooks would make every kernel launch wait for the device.
/// A tool Kokkos loads replaces it with its own answer.
void no_global_fences() {
#if KOKKOS_VERSION >= 30500
  KT::set_request_tool_settings_callback(
      [](const std::uint32_t count, KT::ToolSettings* settings) {
        if (count > 0 && settings != nullptr)
          settings->requires_global_fencing = false;
      });
#endif
}

/// Made when the library is loaded: from then on the core installs the
/// hooks before a counter, a budget or a conversion needs them; Kokkos,
/// initialized later, makes no fences for them.
const bool installer_registered =
    (set_hook_installer(&install_hooks), note_own_module(&installer_registered),
     no_global_fences(), true);

} // namespace
} // namespace cunumpy::Impl

/// Referenced by programs that link this library statically (the
/// `cunumpy::cunumpy` target's link options), so that the linker keeps this
/// file, and with it the installer, even in a program that only counts.
extern "C" const bool cunumpy_kokkos_hooks =
    cunumpy::Impl::installer_registered;
