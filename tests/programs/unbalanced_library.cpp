// A library whose regions are unbalanced as Trilinos 13.2's Tpetra's are
// (with TPETRA_USE_KOKKOS_PROFILING=1): some of its scopes pop a Kokkos
// region they never pushed, closing their caller's regions early; one of
// its calls also pushes and pops a region of its own around a copy. Built
// as a shared library, so that the plugin names it
// (libunbalanced_library.so).

#include "tool_events.hpp"

namespace unbalanced_library {

/// As Tpetra::CrsMatrix::fillComplete: four pops more than pushes. The
/// first closes its own region at once, the next the caller's region; the
/// other three, its own last one included, find none open.
void fill_complete() {
  tool_events::region("unbalanced_library::fill_complete");
  tool_events::end_region(); // a scope that pushed nothing
  tool_events::region("unbalanced_library::make_col_map");
  tool_events::end_region();
  // The caller's region, then none (its own last pop included).
  for (int i = 0; i < 4; ++i)
    tool_events::end_region();
}

/// As Tpetra::MultiVector::putScalar on a device: a region of its own
/// around a copy to the device.
void put_scalar() {
  tool_events::region("unbalanced_library::put_scalar");
  tool_events::copy_to_device(8);
  tool_events::end_region();
}

} // namespace unbalanced_library
