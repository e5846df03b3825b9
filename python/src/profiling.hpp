#ifndef CUNUMPY_PYTHON_PROFILING_HPP
#define CUNUMPY_PYTHON_PROFILING_HPP

#include <memory>
#include <pybind11/pybind11.h>
#include <string>

#include <cunumpy/event.hpp>
#include <cunumpy/transfer_counter.hpp>

namespace cunumpy::python {

namespace py = pybind11;

/// Python holds counters by shared_ptr; a budget's phase counters alias the
/// budget, which keeps them alive.
using CounterPtr = std::shared_ptr<profiling::TransferCounter>;

/// The kind called `name` ("to_host", ...); ValueError listing the kinds for
/// any other name.
EventKind parse_kind(const std::string& name);

/// Raises AssertionError(message) in Python.
[[noreturn]] void raise_assertion(const std::string& message);

} // namespace cunumpy::python

#endif
