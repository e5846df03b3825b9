#ifndef CUNUMPY_PYTHON_CALL_SITE_HPP
#define CUNUMPY_PYTHON_CALL_SITE_HPP

// The Python line that caused a copy: the innermost Python frame outside
// the cunumpy package, so that reports name the user's file and line.

#include <string>
#include <string_view>

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::python {

struct PythonSite {
  std::string file;
  int line = 0;
  std::string function;
};

/// The innermost Python frame outside the cunumpy package (the directory of
/// this extension module), or an empty site
/// when there is none. Needs the GIL.
PythonSite python_caller();

/// Makes the recorder ask for the Python line when a copy made by C++ code
/// called from Python has no better call site (no frame with line
/// information). remove_site_provider() undoes it before the interpreter
/// goes away.
void install_site_provider();
void remove_site_provider();

/// "to_numpy(shape=(100000,), dtype=float64)".
std::string describe(std::string_view api, const Impl::ArrayShape& shape);

/// While alive, copies on this thread are attributed to the Python caller
/// with the description `description` (see Impl::ApiScope).
class PythonApiScope {
public:
  explicit PythonApiScope(std::string_view description, bool async = false);

private:
  PythonSite site_;
  Impl::ApiScope scope_;
};

} // namespace cunumpy::python

#endif
