// In-process installation of cunumpy's Kokkos Tools callbacks (the one
// event path of tools/callbacks.hpp): the first time cunumpy is used, after
// Kokkos::initialize, the callbacks Kokkos held (a tool loaded through
// KOKKOS_TOOLS_LIBS, another in-process hook) become the next tool, and
// cunumpy's take their slots. The only file of the event path that calls
// Kokkos.

#include <atomic>
#include <mutex>
#include <new>
#include <stdexcept>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>

#include "cuda/collector.hpp"
#include "recorder/recorder.hpp"
#include "tools/callbacks.hpp"

namespace cunumpy::Impl {
namespace KT = Kokkos::Tools::Experimental;

namespace tools {
namespace {

static_assert(std::is_same_v<KT::EventSet, Kokkos_Profiling_EventSet>,
              "Kokkos' EventSet is its C interface's table");
static_assert(sizeof(Kokkos::Tools::SpaceHandle::name) == 64,
              "record:: reads space names as Kokkos' 64-byte arrays");

bool get_table(Kokkos_Profiling_EventSet& table) {
  // Made in place: an assignment would copy Kokkos' 1.7 KB twice.
  ::new (static_cast<void*>(&table))
      Kokkos_Profiling_EventSet(KT::get_callbacks());
  return true;
}

bool set_table(const Kokkos_Profiling_EventSet& table) {
  KT::set_callbacks(table);
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

TableAccess linked_kokkos_table() {
  return {&get_table, &set_table};
}

} // namespace tools

namespace {
std::mutex install_mutex;
} // namespace

void ensure_hooks() {
  std::atomic<bool>& installed = Recorder::instance().hooks_installed();
  if (installed.load(std::memory_order_acquire))
    return;
  std::lock_guard lock(install_mutex);
  if (installed.load(std::memory_order_relaxed))
    return;
  if (Recorder::instance().fed_by_plugin()) {
    installed.store(true, std::memory_order_release);
    return;
  }
  if (!Kokkos::is_initialized())
    throw std::runtime_error(
        "cunumpy: Kokkos is not initialized; call Kokkos::initialize (or "
        "create a Kokkos::ScopeGuard) before using cunumpy");
  const Kokkos_Profiling_EventSet own = tools::own_callbacks();
  Kokkos_Profiling_EventSet table = KT::get_callbacks();
  if (table.begin_deep_copy != own.begin_deep_copy) {
    // What Kokkos called until now is where cunumpy forwards; cunumpy takes
    // the slots it records, and leaves the others to their owners.
    tools::set_next(table);
    Kokkos_Profiling_EventSet entries{};
#define CUNUMPY_TOOLS_TAKE(name, type, entry)                                  \
  if (tools::records_slot(tools::Slot::name)) {                                \
    table.name = own.name;                                                     \
    if (!tools::feeds_advice_only(tools::Slot::name))                          \
      entries.name = own.name;                                                 \
  }
    CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_TAKE)
#undef CUNUMPY_TOOLS_TAKE
    KT::set_callbacks(table);
    tools::watch(tools::linked_kokkos_table(), entries, true);
    Recorder::instance().set_device_fence(&tools::fence_for_debug_sync);
  }
  // CUDA's own record of the copies Kokkos does not report.
  cuda::start_collector();
  installed.store(true, std::memory_order_release);
}

} // namespace cunumpy::Impl
