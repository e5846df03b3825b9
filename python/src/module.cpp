#include "module.hpp"

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/version.hpp>

#include "support/identity.hpp"

namespace {
/// An address inside this module: its frames are cunumpy's, never a call
/// site (a user's module may also be called _core).
const char module_marker = 0;

/// `message` with the C++ name it starts with ("cunumpy::TransferBudget::
/// require: ...") spelt as Python spells it ("cunumpy.profiling.
/// TransferBudget.require: ...").
std::string python_names(const std::string& message) {
  const std::string cpp = "cunumpy::";
  const std::size_t end = message.find(": ");
  if (message.compare(0, cpp.size(), cpp) != 0 || end == std::string::npos ||
      message.find(' ') < end)
    return message;
  std::string name = message.substr(0, end);
  for (std::size_t at = name.find("::"); at != std::string::npos;
       at = name.find("::", at + 1))
    name.replace(at, 2, ".");
  for (const char* type : {"TransferBudget", "TransferCounter", "PhaseScope"})
    if (name.compare(8, std::strlen(type), type) == 0)
      name.insert(8, "profiling.");
  return name + message.substr(end);
}

/// C++ exceptions of cunumpy's core reach Python as pybind11 would raise
/// them (ValueError, IndexError, ...), with Python's names in the message.
void translate_cpp_names(std::exception_ptr error) {
  try {
    if (error)
      std::rethrow_exception(error);
  } catch (const pybind11::builtin_exception&) {
    throw; // raised by the bindings, in Python's words already
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::out_of_range& failure) {
    PyErr_SetString(PyExc_IndexError, python_names(failure.what()).c_str());
  } catch (const std::overflow_error& failure) {
    PyErr_SetString(PyExc_OverflowError, python_names(failure.what()).c_str());
  } catch (const std::invalid_argument& failure) {
    PyErr_SetString(PyExc_ValueError, python_names(failure.what()).c_str());
  } catch (const std::domain_error& failure) {
    PyErr_SetString(PyExc_ValueError, python_names(failure.what()).c_str());
  } catch (const std::length_error& failure) {
    PyErr_SetString(PyExc_ValueError, python_names(failure.what()).c_str());
  } catch (const std::range_error& failure) {
    PyErr_SetString(PyExc_ValueError, python_names(failure.what()).c_str());
  } catch (const std::exception& failure) {
    const std::string message = failure.what();
    if (python_names(message) == message)
      throw; // pybind11's own translation
    PyErr_SetString(PyExc_RuntimeError, python_names(message).c_str());
  }
}
} // namespace

PYBIND11_MODULE(_core, module) {
  // The core the loader gave this module (the one the process loaded
  // first, maybe a plugin's of another install) is the build it was made
  // against, or nothing of it is used (support/identity.hpp).
  if (const std::string mismatch = cunumpy::Impl::core_mismatch(
          "the Python module", reinterpret_cast<const void*>(&module_marker));
      !mismatch.empty())
    throw pybind11::import_error("cunumpy: " + mismatch);
  cunumpy::Impl::note_own_module(&module_marker);
  module.doc() = "The compiled core of cunumpy: Kokkos device arrays, copies "
                 "and the shared transfer recorder.";
  module.attr("__version__") = CUNUMPY_VERSION_STRING;
  // Registered first, so tried last: after TransferError's (AssertionError).
  pybind11::register_exception_translator(&translate_cpp_names);
  using namespace cunumpy::python;
  // pybind11 takes the module name of the types and functions it creates
  // (their __module__, the type name in error messages and signatures) from
  // the scope's __module__ when it has one: name them after the public
  // modules that re-export them, cunumpy.DeviceArray rather than
  // cunumpy._core.DeviceArray.
  module.attr("__module__") = "cunumpy";
  bind_lifecycle(module);
  bind_device_array(module);
  bind_conversions(module);
  module.attr("__module__") = "cunumpy.profiling";
  bind_advice(module);
  bind_profiling(module);
  bind_budget(module);
  module.attr("__module__") = "cunumpy";
  bind_sync(module);
  py::delattr(module, "__module__");
}
