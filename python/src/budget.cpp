// TransferBudget: phases as context managers, rules, violations and the TOML
// rule file. The Python package adds count(name) (a decorator), calls[name]
// and require(name, allow=..., ignore=..., calls=...) on top.

#include <memory>
#include <optional>
#include <pybind11/stl.h>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <cunumpy/impl/rule_fields.hpp>
#include <cunumpy/transfer_budget.hpp>

#include "module.hpp"
#include "profiling.hpp"

namespace cunumpy::python {
namespace {

using profiling::Limits;
using profiling::Rule;
using profiling::TransferBudget;
using profiling::TransferCounter;
using profiling::Violation;
using BudgetPtr = std::shared_ptr<TransferBudget>;

/// The context manager of budget.phase(name): yields the phase's counter.
struct PhaseContext {
  BudgetPtr budget;
  std::string name;
  std::optional<profiling::PhaseScope> scope;

  CounterPtr enter() {
    if (scope)
      throw py::value_error("TransferBudget.phase('" + name +
                            "'): this block is already active");
    scope.emplace(budget->phase(name));
    return CounterPtr(budget, &scope->counter());
  }
  void exit() {
    if (!scope)
      throw py::value_error("TransferBudget.phase('" + name +
                            "'): __exit__ without __enter__ (or called "
                            "twice); use the block as `with "
                            "budget.phase(name):`");
    scope.reset();
  }
};

std::optional<std::string> kind_name(const std::optional<EventKind>& kind) {
  if (!kind)
    return std::nullopt;
  return std::string(to_string(*kind));
}

py::dict limits_dict(const Limits& limits) {
  using cunumpy::profiling::Limit;
  py::dict result;
  const auto set = [&](Limit limit, const auto& value) {
    if (value)
      result[py::str(std::string(to_string(limit)))] = *value;
  };
  set(Limit::max_nbytes, limits.max_nbytes());
  set(Limit::max_count, limits.max_count());
  set(Limit::max_total_bytes, limits.max_total_bytes());
  set(Limit::blocking, limits.blocking());
  set(Limit::implicit, limits.implicit());
  return result;
}

[[noreturn]] void raise_problem(const Impl::FieldProblem& problem,
                                const std::string& where,
                                const std::string& field) {
  const std::string message = where + ": " + field + " " + problem.text;
  if (problem.wrong_type)
    throw py::type_error(message);
  throw py::value_error(message);
}

} // namespace

Impl::LimitValue limit_value(const py::handle& value) {
  using Impl::LimitValue;
  LimitValue result;
  result.text = py::repr(value).cast<std::string>();
  if (PyBool_Check(value.ptr())) {
    result.type = LimitValue::Type::boolean;
    result.boolean = value.ptr() == Py_True;
    return result;
  }
  if (PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    return result;
  // Integers, and NumPy's: their __index__.
  const py::int_ integer =
      py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (!integer)
    throw py::error_already_set();
  result.type = LimitValue::Type::integer;
  result.text = py::str(integer).cast<std::string>();
  int overflow = 0;
  const long long number =
      PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
  if (overflow < 0) {
    result.negative = true;
  } else if (overflow > 0) {
    const unsigned long long magnitude =
        PyLong_AsUnsignedLongLong(integer.ptr());
    if (PyErr_Occurred() != nullptr) {
      PyErr_Clear();
      result.fits = false;
    } else {
      result.magnitude = magnitude;
    }
  } else {
    result.negative = number < 0;
    result.magnitude = number < 0
                           ? 0ull - static_cast<unsigned long long>(number)
                           : static_cast<unsigned long long>(number);
  }
  return result;
}

void bind_budget(py::module_& module) {
  py::class_<Rule>(module, "Rule",
                   "The rule of a phase: allowed kinds with limits, ignored "
                   "kinds, the required number of calls.")
      .def(py::init<>())
      .def(
          "allow",
          [](Rule& rule, const std::string& kind,
             std::optional<std::uint64_t> max_nbytes,
             std::optional<std::uint64_t> max_count,
             std::optional<std::uint64_t> max_total_bytes,
             std::optional<bool> blocking,
             std::optional<bool> implicit) -> Rule& {
            Limits limits;
            if (max_nbytes)
              limits.max_nbytes(*max_nbytes);
            if (max_count)
              limits.max_count(*max_count);
            if (max_total_bytes)
              limits.max_total_bytes(*max_total_bytes);
            if (blocking)
              limits.blocking(*blocking);
            if (implicit)
              limits.implicit(*implicit);
            return rule.allow(parse_kind(kind), std::move(limits));
          },
          py::arg("kind"), py::kw_only(), py::arg("max_nbytes") = py::none(),
          py::arg("max_count") = py::none(),
          py::arg("max_total_bytes") = py::none(),
          py::arg("blocking") = py::none(), py::arg("implicit") = py::none(),
          py::return_value_policy::reference_internal)
      .def(
          "ignore",
          [](Rule& rule, const std::vector<std::string>& kinds) -> Rule& {
            std::set<EventKind> ignored;
            for (const auto& kind : kinds)
              ignored.insert(parse_kind(kind));
            return rule.ignore(std::move(ignored));
          },
          py::arg("kinds"), py::return_value_policy::reference_internal)
      .def(
          "require_calls",
          [](Rule& rule, std::uint64_t calls) -> Rule& {
            return rule.calls(calls);
          },
          py::arg("calls"), py::return_value_policy::reference_internal)
      .def_property_readonly(
          "allowed",
          [](const Rule& rule) {
            py::dict allowed;
            for (const auto& [kind, limits] : rule.allowed())
              allowed[py::str(std::string(to_string(kind)))] =
                  limits_dict(limits);
            return allowed;
          })
      .def_property_readonly("ignored",
                             [](const Rule& rule) {
                               py::list ignored;
                               for (EventKind kind : rule.ignored())
                                 ignored.append(std::string(to_string(kind)));
                               return py::tuple(ignored);
                             })
      .def(
          "_allow_checked",
          [](Rule& rule, const std::string& kind, const py::dict& limits,
             const std::string& where) -> Rule& {
            Limits checked;
            for (const auto& [key, value] : limits) {
              const std::string name = py::str(key).cast<std::string>();
              const auto limit = Impl::parse_rule_limit(name);
              if (!limit)
                throw py::value_error(where + ": unknown limit " +
                                      py::repr(key).cast<std::string>() +
                                      " for '" + kind + "' (expected one of " +
                                      Impl::rule_limit_names() + ")");
              if (const auto problem =
                      Impl::set_limit(checked, *limit, limit_value(value)))
                raise_problem(problem, where, kind + "." + name);
            }
            return rule.allow(parse_kind(kind), std::move(checked));
          },
          py::arg("kind"), py::arg("limits"), py::arg("where"),
          py::return_value_policy::reference_internal,
          "allow(), with the limits checked as the rule file checks them.")
      .def(
          "_calls_checked",
          [](Rule& rule, const py::handle& calls,
             const std::string& where) -> Rule& {
            std::uint64_t count = 0;
            if (const auto problem =
                    Impl::count_value(limit_value(calls), count))
              raise_problem(problem, where, "calls");
            return rule.calls(count);
          },
          py::arg("calls"), py::arg("where"),
          py::return_value_policy::reference_internal)
      .def(
          "set_optional",
          [](Rule& rule, bool value) -> Rule& { return rule.optional(value); },
          py::arg("value") = true, py::return_value_policy::reference_internal)
      .def_property_readonly(
          "calls",
          [](const Rule& rule) -> std::optional<std::uint64_t> {
            return rule.calls();
          })
      .def_property_readonly("optional", &Rule::is_optional)
      .def("__str__", &Rule::str)
      .def("__repr__",
           [](const Rule& rule) { return "Rule(" + rule.str() + ")"; });

  py::class_<Violation>(module, "Violation",
                        "A broken rule with the events that broke it.")
      .def_readonly("phase", &Violation::phase)
      .def_property_readonly(
          "kind", [](const Violation& v) { return kind_name(v.kind); })
      .def_property_readonly(
          "limit",
          [](const Violation& v) { return std::string(to_string(v.limit)); })
      .def_readonly("details", &Violation::details)
      .def_readonly("allowed", &Violation::allowed)
      .def_readonly("actual", &Violation::actual)
      .def_readonly("events", &Violation::events)
      .def("__str__", &Violation::str)
      .def("__repr__", [](const Violation& v) {
        return "Violation(phase='" + v.phase + "', limit='" +
               std::string(to_string(v.limit)) + "')";
      });

  py::class_<PhaseContext>(module, "Phase",
                           "Context manager of TransferBudget.phase(name).")
      .def_readonly("name", &PhaseContext::name)
      .def("__enter__", &PhaseContext::enter)
      .def("__exit__", [](PhaseContext& phase, const py::args&) {
        phase.exit();
        return false;
      });

  py::class_<TransferBudget, BudgetPtr>(
      module, "TransferBudget",
      "Counts transfers per named phase and checks a rule for each.")
      .def(py::init([](bool started, const py::object& advice) {
             return std::make_shared<TransferBudget>(profiling::BudgetOptions{
                 started, TransferCounter::default_max_events,
                 parse_recording(advice, "TransferBudget")});
           }),
           py::arg("started") = true, py::arg("advice") = "off")
      .def("start", &TransferBudget::start,
           "Counting starts (again); phases entered before are not counted.")
      .def("stop", &TransferBudget::stop,
           "Counting stops; phases keep what they counted.")
      .def_property_readonly("started", &TransferBudget::started)
      .def(
          "phase",
          [](const BudgetPtr& budget, std::string name) {
            return PhaseContext{budget, std::move(name), std::nullopt};
          },
          py::arg("name"),
          "Context manager: phase `name` while the block runs; yields its "
          "TransferCounter.")
      .def(
          "__getitem__",
          [](const BudgetPtr& budget, const std::string& name) {
            return CounterPtr(budget, &(*budget)[name]);
          },
          py::arg("name"), "The TransferCounter of phase `name`.")
      .def_property_readonly(
          "total",
          [](const BudgetPtr& budget) {
            return CounterPtr(budget, &budget->total());
          },
          "Every event counted while started, whatever its phase.")
      .def("_calls", &TransferBudget::calls, py::arg("name"))
      .def("phases", &TransferBudget::phases,
           "The phases seen or required, first seen first.")
      .def(
          "_require",
          [](TransferBudget& budget, const std::string& name,
             const Rule& rule) { budget.require(name, rule); },
          py::arg("name"), py::arg("rule"))
      .def("rule", &TransferBudget::rule, py::arg("name"),
           "The Rule of phase `name`, or None.")
      .def(
          "require_file",
          [](TransferBudget& budget, const py::object& path) {
            budget.require_file(
                py::str(py::module_::import("os").attr("fspath")(path))
                    .cast<std::string>());
          },
          py::arg("path"),
          "Adds the rules of a TOML rule file ([phases.<name>] tables).")
      .def(
          "require_toml",
          [](TransferBudget& budget, const std::string& toml,
             const std::string& source) { budget.require_toml(toml, source); },
          py::arg("toml"), py::arg("source") = "<string>",
          "Adds the rules of TOML text.")
      .def("violations", &TransferBudget::violations,
           "Every broken rule, with the offending events.")
      .def("check", &TransferBudget::check,
           "AssertionError with report() when a rule is broken.")
      .def(
          "report",
          [](const TransferBudget& budget,
             const std::optional<std::string>& format) {
            return budget.report(format.value_or("text"));
          },
          py::arg("format") = "text",
          "The report of the run as the plugin writes it, in `format`: "
          "'text' (the default: the verdict, the totals, the regions, every "
          "phase's events and rule, the broken rules, advice), 'summary', "
          "'json' (cunumpy-report merges these), 'hatchet', 'sarif' (code "
          "scanning) or 'junit' (test results).")
      .def(
          "job_report",
          [](const TransferBudget& budget, const std::string& format) {
            return budget.job_report(format);
          },
          py::arg("format") = "text",
          "The job's report under MPI (mpi4py): every rank's report merged "
          "over MPI_COMM_WORLD; every rank calls it. The job's report on "
          "rank 0, '' on the others; outside MPI, report(format).")
      .def("job_check", &TransferBudget::job_check,
           "check() of the job under MPI, on every rank: AssertionError on "
           "every rank when a rule is broken on any rank or a rank is "
           "missing; every rank calls it. Outside MPI, check().")
      .def(
          "advice",
          [](const TransferBudget& budget, const py::kwargs& thresholds) {
            const auto options =
                advice_options(thresholds, "TransferBudget.advice");
            try {
              return budget.advice(options);
            } catch (const std::logic_error&) {
              throw std::runtime_error(
                  "TransferBudget.advice: this budget records nothing for "
                  "advice (advice='off', the default); make it with "
                  "TransferBudget(advice='on')");
            }
          },
          "What the counted events say is worth changing: a list of "
          "Finding, largest estimated saving first, each with the phase its "
          "region counts in. Keyword arguments set the thresholds "
          "(cunumpy._core.advice_thresholds). Never changes a verdict.");
}

} // namespace cunumpy::python
