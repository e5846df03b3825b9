#ifndef CUNUMPY_SYNCHRONIZE_HPP
#define CUNUMPY_SYNCHRONIZE_HPP

#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/source_location.hpp>

namespace cunumpy {
namespace Impl {

/// instance.fence(name) where Kokkos names fences (4.x), else fence().
template <class ExecSpace>
void fence_instance(const ExecSpace& instance, const char* name) {
#if KOKKOS_VERSION >= 40000
  instance.fence(name);
#else
  (void)name;
  instance.fence();
#endif
}

} // namespace Impl

/// Waits until all work queued on every execution space has finished (a
/// global Kokkos::fence) — Python's `xp.synchronize()`. Recorded as one
/// `sync` event the program asked for (not `[implicit]`), at the caller's
/// line, whether or not the Kokkos version reports fences to tools.
inline void synchronize(SourceLocation where = SourceLocation::current()) {
  Impl::ensure_hooks();
  Impl::SyncScope wait("synchronize", where);
#if KOKKOS_VERSION >= 40000
  Kokkos::fence("cunumpy::synchronize");
#else
  Kokkos::fence();
#endif
}

/// Waits until the work queued on `instance` has finished (instance.fence()),
/// recorded like synchronize().
template <
    class ExecSpace,
    std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void synchronize(const ExecSpace& instance,
                 SourceLocation where = SourceLocation::current()) {
  Impl::ensure_hooks();
  Impl::SyncScope wait("synchronize", where);
  Impl::fence_instance(instance, "cunumpy::synchronize");
}

} // namespace cunumpy

#endif
