// Advice: Finding and FindingSite, and the thresholds of advice() as
// keyword arguments, checked by the core's checker of rule fields.

#include <cmath>
#include <pybind11/stl.h>
#include <string>

#include <cunumpy/advice.hpp>
#include <cunumpy/impl/rule_fields.hpp>

#include "module.hpp"
#include "profiling.hpp"

namespace cunumpy::python {

using profiling::AdviceOptions;
using profiling::AdviceRecording;
using profiling::Finding;
using profiling::FindingSite;

namespace {

constexpr const char* threshold_names =
    "min_saving_seconds, min_calls, small_bytes, many_copies, "
    "pageable_min_bytes, fresh_min_bytes or pinned_bandwidth";

/// A threshold in seconds or bytes per second: a non-negative number.
double number_argument(const py::handle& value, const std::string& where,
                       const std::string& name) {
  const std::string shown = py::repr(value).cast<std::string>();
  if (PyBool_Check(value.ptr()) ||
      !(PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr())))
    throw py::type_error(where + ": " + name + " must be a number, not " +
                         shown);
  const double number = value.cast<double>();
  if (!std::isfinite(number) || number < 0.0)
    throw py::value_error(where + ": " + name +
                          " must be a non-negative number, not " + shown);
  return number;
}

std::uint64_t count_argument(const py::handle& value, const std::string& where,
                             const std::string& name) {
  std::uint64_t count = 0;
  if (const Impl::FieldProblem problem =
          Impl::count_value(limit_value(value), count)) {
    const std::string message = where + ": " + name + " " + problem.text;
    if (problem.wrong_type)
      throw py::type_error(message);
    throw py::value_error(message);
  }
  return count;
}

std::string optional_text(const std::optional<double>& value) {
  if (!value)
    return "None";
  return py::repr(py::float_(*value)).cast<std::string>();
}

} // namespace

AdviceRecording parse_recording(const py::handle& value,
                                const std::string& where) {
  const std::string shown = py::repr(value).cast<std::string>();
  if (!py::isinstance<py::str>(value))
    throw py::type_error(where +
                         ": advice must be 'on', 'off' or "
                         "'contents', not " +
                         shown);
  const std::string name = value.cast<std::string>();
  if (name == "on")
    return AdviceRecording::on;
  if (name == "off")
    return AdviceRecording::off;
  if (name == "contents")
    return AdviceRecording::contents;
  throw py::value_error(where +
                        ": advice must be 'on', 'off' or 'contents' "
                        "(which also hashes the host side of every "
                        "copy), not " +
                        shown);
}

AdviceOptions advice_options(const py::kwargs& thresholds,
                             const std::string& where) {
  AdviceOptions options;
  for (const auto& [key, value] : thresholds) {
    const std::string name = py::str(key).cast<std::string>();
    if (name == "min_saving_seconds")
      options.min_saving_seconds = number_argument(value, where, name);
    else if (name == "pinned_bandwidth")
      options.pinned_bandwidth = number_argument(value, where, name);
    else if (name == "min_calls")
      options.min_calls = count_argument(value, where, name);
    else if (name == "small_bytes")
      options.small_bytes = count_argument(value, where, name);
    else if (name == "many_copies")
      options.many_copies = count_argument(value, where, name);
    else if (name == "pageable_min_bytes")
      options.pageable_min_bytes = count_argument(value, where, name);
    else if (name == "fresh_min_bytes")
      options.fresh_min_bytes = count_argument(value, where, name);
    else
      throw py::type_error(where + ": unknown threshold '" + name +
                           "' (expected " + threshold_names + ")");
  }
  return options;
}

void bind_advice(py::module_& module) {
  py::class_<FindingSite>(module, "FindingSite", "One call site of a finding.")
      .def_property_readonly("site",
                             [](const FindingSite& s) { return s.site.str(); })
      .def_property_readonly("file",
                             [](const FindingSite& s) { return s.site.file; })
      .def_property_readonly("line",
                             [](const FindingSite& s) { return s.site.line; })
      .def_property_readonly(
          "function", [](const FindingSite& s) { return s.site.function; })
      .def_readonly("what", &FindingSite::what)
      .def_property_readonly(
          "kind",
          [](const FindingSite& s) { return std::string(to_string(s.kind)); })
      .def("__repr__", [](const FindingSite& s) {
        return "FindingSite('" + s.site.str() + "', '" + s.what + "')";
      });

  py::class_<Finding>(module, "Finding",
                      "What advice found: a copy pattern at a place, what "
                      "it costs and the change that removes it.")
      .def_property_readonly(
          "rule", [](const Finding& f) { return std::string(f.name()); })
      .def_readonly("region", &Finding::region)
      .def_readonly("phase", &Finding::phase)
      .def_readonly("sites", &Finding::sites)
      .def_readonly("count", &Finding::count)
      .def_readonly("calls", &Finding::calls)
      .def_readonly("region_calls", &Finding::region_calls)
      .def_readonly("bytes", &Finding::bytes)
      .def_readonly("seconds", &Finding::seconds)
      .def_readonly("saving_seconds", &Finding::saving_seconds)
      .def_readonly("saving_per_call", &Finding::saving_per_call)
      .def_readonly("evidence", &Finding::evidence)
      .def_readonly("estimate", &Finding::estimate)
      .def_readonly("fix", &Finding::fix)
      .def("__str__", &Finding::str)
      .def("__repr__", [](const Finding& f) {
        return "Finding('" + std::string(f.name()) + "', region='" + f.region +
               "', saving_seconds=" + optional_text(f.saving_seconds) + ")";
      });

  const AdviceOptions defaults;
  py::dict thresholds;
  thresholds["min_saving_seconds"] = defaults.min_saving_seconds;
  thresholds["min_calls"] = defaults.min_calls;
  thresholds["small_bytes"] = defaults.small_bytes;
  thresholds["many_copies"] = defaults.many_copies;
  thresholds["pageable_min_bytes"] = defaults.pageable_min_bytes;
  thresholds["fresh_min_bytes"] = defaults.fresh_min_bytes;
  thresholds["pinned_bandwidth"] = defaults.pinned_bandwidth;
  module.attr("advice_thresholds") = thresholds;
  py::list rules;
  for (std::size_t i = 0; i < profiling::advice_rule_count; ++i)
    rules.append(std::string(to_string(static_cast<profiling::AdviceRule>(i))));
  module.attr("advice_rules") = py::tuple(rules);
}

} // namespace cunumpy::python
