#ifndef CUNUMPY_PYTHON_PROFILING_HPP
#define CUNUMPY_PYTHON_PROFILING_HPP

#include <memory>
#include <pybind11/pybind11.h>
#include <string>

#include <cunumpy/advice.hpp>
#include <cunumpy/event.hpp>
#include <cunumpy/impl/rule_fields.hpp>
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

/// A Python value as the rule checkers of the core see it (budget.cpp).
Impl::LimitValue limit_value(const py::handle& value);

/// advice="on" | "off" | "contents" of a counter or budget; TypeError or
/// ValueError naming `where` for anything else (advice.cpp).
profiling::AdviceRecording parse_recording(const py::handle& value,
                                           const std::string& where);
/// The thresholds of advice(**thresholds), each checked: unknown names are a
/// TypeError, negative or non-numeric values a ValueError or TypeError.
profiling::AdviceOptions advice_options(const py::kwargs& thresholds,
                                        const std::string& where);

} // namespace cunumpy::python

#endif
