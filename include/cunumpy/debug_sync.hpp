#ifndef CUNUMPY_DEBUG_SYNC_HPP
#define CUNUMPY_DEBUG_SYNC_HPP

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::profiling {

/// Debug-sync mode while alive: the host waits for the device after every
/// Kokkos kernel, and each wait is recorded as an implicit sync named after
/// the kernel ("debug_sync(after kernel \"name\")"), at the line that
/// launched it, in the phase that was open. Scopes nest.
/// CUNUMPY_DEBUG_SYNC=1 turns the mode on for the whole run. See
/// docs/counting.md, "Which kernel waited".
class DebugSync {
public:
  DebugSync() noexcept { Impl::set_debug_sync(true); }
  ~DebugSync() { Impl::set_debug_sync(false); }
  DebugSync(const DebugSync&) = delete;
  DebugSync& operator=(const DebugSync&) = delete;
};

} // namespace cunumpy::profiling

#endif
