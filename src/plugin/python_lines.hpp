#ifndef CUNUMPY_PLUGIN_PYTHON_LINES_HPP
#define CUNUMPY_PLUGIN_PYTHON_LINES_HPP

// The Python line of a Kokkos event, when the plugin runs in a CPython
// interpreter (3.9 to 3.13) and the thread making the event holds the GIL:
// the innermost Python frame outside cunumpy's package, found through the
// interpreter's C API looked up at run time (no link against libpython).
// It is the site provider of the recorder (cunumpy/impl/api_scope.hpp),
// and the call site shows it beside the native frame.

namespace cunumpy::plugin {

/// Installs the provider when the process is a CPython interpreter that
/// has the functions it needs; says nothing otherwise. Returns whether it
/// was installed.
bool install_python_lines();

} // namespace cunumpy::plugin

#endif
