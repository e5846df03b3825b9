#ifndef CUNUMPY_IMPL_KOKKOS_LAYER_HPP
#define CUNUMPY_IMPL_KOKKOS_LAYER_HPP

// A program that uses cunumpy's public headers links the Kokkos-facing
// library (libcunumpy), which installs cunumpy's Kokkos Tools callbacks
// when it is loaded. Counting needs nothing else of it, so without this
// reference a static link would leave it out and a shared one with
// --as-needed would drop it: the counters would then see no event. The core
// and the plugin, which link no Kokkos, are built with CUNUMPY_CORE_ONLY.

#ifndef CUNUMPY_CORE_ONLY
extern "C" const bool cunumpy_kokkos_hooks;

namespace cunumpy::Impl {
[[gnu::used]] inline const bool* const kokkos_layer = &cunumpy_kokkos_hooks;
} // namespace cunumpy::Impl
#endif

#endif
