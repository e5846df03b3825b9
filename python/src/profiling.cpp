// TransferCounter, its events and call-site summaries, count_transfers and
// assert_no_transfers as context managers, and the markers.

#include "profiling.hpp"

#include <memory>
#include <optional>
#include <pybind11/stl.h>
#include <stdexcept>
#include <string>

#include <cunumpy/assert_no_transfers.hpp>
#include <cunumpy/cuda_view.hpp>
#include <cunumpy/event.hpp>
#include <cunumpy/transfer_counter.hpp>
#include <cunumpy/transfer_error.hpp>

#include "call_site.hpp"
#include "module.hpp"

namespace cunumpy::python {

using profiling::SiteSummary;
using profiling::TransferCounter;

EventKind parse_kind(const std::string& name) {
  if (auto kind = parse_event_kind(name))
    return *kind;
  std::string kinds;
  for (EventKind kind : all_event_kinds)
    kinds += (kinds.empty() ? "" : ", ") + std::string(to_string(kind));
  throw py::value_error("cunumpy: unknown event kind '" + name +
                        "' (expected one of " + kinds + ")");
}

[[noreturn]] void raise_assertion(const std::string& message) {
  PyErr_SetString(PyExc_AssertionError, message.c_str());
  throw py::error_already_set();
}

namespace {

/// The context manager count_transfers() returns: counts into `counter`
/// from __enter__ to __exit__.
struct CountScope {
  CounterPtr counter;
  std::optional<profiling::TransferCountScope> scope;

  CounterPtr enter() {
    if (scope)
      throw py::value_error(
          "count_transfers: this block is already active; call "
          "count_transfers(counter) again to count into the same counter");
    scope.emplace(*counter);
    return counter;
  }
  void exit() {
    if (!scope)
      throw py::value_error(
          "count_transfers: __exit__ without __enter__ (or called twice); "
          "use the block as `with count_transfers() as counter:`");
    scope.reset();
  }
};

/// The context manager of assert_no_transfers(): raises AssertionError with
/// the report when the block copied between host and device.
struct NoTransfersScope {
  CounterPtr counter;
  std::optional<profiling::TransferCountScope> scope;
  PythonSite site;

  CounterPtr enter() {
    site = python_caller();
    counter = std::make_shared<TransferCounter>(
        TransferCounter::default_max_events,
        profiling::AdviceRecording::off); // counts are all it needs
    scope.emplace(*counter);
    return counter;
  }
  void exit(bool raised) {
    if (!scope)
      throw py::value_error(
          "assert_no_transfers: __exit__ without __enter__ (or called "
          "twice); use the block as `with assert_no_transfers():`");
    scope.reset();
    if (raised)
      return; // the block's own exception passes through
    const std::string message = Impl::no_transfers_failure(
        *counter, "cunumpy.profiling.assert_no_transfers",
        SourceLocation{site.file.c_str(), site.line, site.function.c_str()});
    if (!message.empty())
      raise_assertion(message);
  }
};

std::string event_repr(const Event& event) {
  std::string text = "Event(kind='" + std::string(to_string(event.kind)) +
                     "', nbytes=" + std::to_string(event.nbytes) + ", what='" +
                     event.what + "', site='" + event.site.str() + "'";
  if (event.async)
    text += ", async=True";
  if (event.implicit)
    text += ", implicit=True";
  return text + ")";
}

} // namespace

void bind_profiling(py::module_& module) {
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error)
        std::rethrow_exception(error);
    } catch (const TransferError& transfer) {
      PyErr_SetString(PyExc_AssertionError, transfer.what());
    }
  });

  py::class_<Event>(module, "Event", "One recorded event.")
      .def_property_readonly(
          "kind", [](const Event& e) { return std::string(to_string(e.kind)); })
      .def_readonly("nbytes", &Event::nbytes)
      .def_readonly("what", &Event::what)
      .def_readonly("label", &Event::label)
      .def_readonly("src_space", &Event::src_space)
      .def_readonly("dst_space", &Event::dst_space)
      .def_property_readonly("site",
                             [](const Event& e) { return e.site.str(); })
      .def_property_readonly("file", [](const Event& e) { return e.site.file; })
      .def_property_readonly("line", [](const Event& e) { return e.site.line; })
      .def_property_readonly("function",
                             [](const Event& e) { return e.site.function; })
      .def_property_readonly(
          "python", [](const Event& e) { return e.site.python; },
          "The Python line beside a native site with a line of its own.")
      .def_property_readonly(
          "native", [](const Event& e) { return e.site.native; },
          "The native module+offset under a Python site.")
      .def_property_readonly(
          "problem", [](const Event& e) { return e.site.problem; },
          "Why the site has no line, or its inlined calls; empty when "
          "nothing was missing.")
      .def_readonly("blocking", &Event::blocking)
      .def_readonly("async_", &Event::async)
      .def_property_readonly("async", [](const Event& e) { return e.async; })
      .def_readonly("implicit", &Event::implicit)
      .def_readonly("thread", &Event::thread)
      .def_readonly("timestamp", &Event::timestamp)
      .def_readonly("duration", &Event::duration)
      .def_readonly("source", &Event::source)
      .def_property_readonly(
          "src_memory",
          [](const Event& e) { return std::string(to_string(e.src_memory)); })
      .def_property_readonly(
          "dst_memory",
          [](const Event& e) { return std::string(to_string(e.dst_memory)); })
      .def_readonly("device_duration", &Event::device_duration)
      .def("__repr__", &event_repr);

  py::class_<SiteSummary>(module, "SiteSummary",
                          "The events of one kind at one call site.")
      .def_property_readonly(
          "kind",
          [](const SiteSummary& s) { return std::string(to_string(s.kind)); })
      .def_property_readonly("site",
                             [](const SiteSummary& s) { return s.site.str(); })
      .def_property_readonly("file",
                             [](const SiteSummary& s) { return s.site.file; })
      .def_property_readonly("line",
                             [](const SiteSummary& s) { return s.site.line; })
      .def_property_readonly("python",
                             [](const SiteSummary& s) { return s.site.python; })
      .def_property_readonly("native",
                             [](const SiteSummary& s) { return s.site.native; })
      .def_property_readonly(
          "problem", [](const SiteSummary& s) { return s.site.problem; })
      .def_readonly("what", &SiteSummary::what)
      .def_readonly("blocking", &SiteSummary::blocking)
      .def_readonly("async_", &SiteSummary::async)
      .def_property_readonly("async",
                             [](const SiteSummary& s) { return s.async; })
      .def_readonly("implicit", &SiteSummary::implicit)
      .def_readonly("count", &SiteSummary::count)
      .def_readonly("nbytes", &SiteSummary::nbytes)
      .def_readonly("max_nbytes", &SiteSummary::max_nbytes)
      .def_readonly("seconds", &SiteSummary::seconds)
      .def_readonly("source", &SiteSummary::source)
      .def_readonly("device_seconds", &SiteSummary::device_seconds)
      .def("__repr__", [](const SiteSummary& s) {
        return "SiteSummary('" + std::string(to_string(s.kind)) + "', '" +
               s.site.str() + ": " + s.what + " (x" + std::to_string(s.count) +
               ")')";
      });

  py::class_<TransferCounter, CounterPtr>(
      module, "TransferCounter",
      "Counts the copies, markers and syncs recorded while it is attached "
      "(by count_transfers() or a TransferBudget phase).")
      .def(py::init([](std::size_t max_events, const py::object& advice) {
             return std::make_shared<TransferCounter>(
                 max_events, parse_recording(advice, "TransferCounter"));
           }),
           py::arg("max_events") = TransferCounter::default_max_events,
           py::arg("advice") = "off")
      .def_property_readonly("total", &TransferCounter::total,
                             "Copies and markers (syncs excluded).")
      .def_property_readonly("to_host", &TransferCounter::to_host)
      .def_property_readonly("to_device", &TransferCounter::to_device)
      .def_property_readonly("device_copy", &TransferCounter::device_copy)
      .def_property_readonly("kernel_conversion",
                             &TransferCounter::kernel_conversion)
      .def_property_readonly("fallback", &TransferCounter::fallback)
      .def_property_readonly("syncs", &TransferCounter::syncs)
      .def_property_readonly("bytes_to_host", &TransferCounter::bytes_to_host)
      .def_property_readonly("bytes_to_device",
                             &TransferCounter::bytes_to_device)
      .def(
          "bytes",
          [](const TransferCounter& c, const std::string& kind) {
            return c.bytes(parse_kind(kind));
          },
          py::arg("kind"), "Bytes of the events of `kind` ('to_host', ...).")
      .def(
          "count",
          [](const TransferCounter& c, const std::string& kind) {
            return c.count(parse_kind(kind));
          },
          py::arg("kind"))
      .def(
          "seconds",
          [](const TransferCounter& c, const std::string& kind) {
            return c.seconds(parse_kind(kind));
          },
          py::arg("kind"))
      .def(
          "async_count",
          [](const TransferCounter& c, const std::string& kind) {
            return c.async_count(parse_kind(kind));
          },
          py::arg("kind"))
      .def_property_readonly("events", &TransferCounter::events,
                             "The newest raw events, oldest first.")
      .def_property_readonly("events_dropped", &TransferCounter::events_dropped)
      .def_property_readonly(
          "events_lost", &TransferCounter::events_lost,
          "Events that reached cunumpy but could not be recorded: the "
          "counts are short by this many.")
      .def_property_readonly(
          "complete", &TransferCounter::complete,
          "False when events may be missing (some could not be recorded, or "
          "another tool replaced cunumpy's Kokkos Tools callbacks).")
      .def_property_readonly("losses", &TransferCounter::losses,
                             "Why the counter is not complete, one line "
                             "per cause.")
      .def_property_readonly("sites", &TransferCounter::sites,
                             "Events aggregated by call site.")
      .def("report", &TransferCounter::report,
           "The summary line and one line per call site.")
      .def("clear", &TransferCounter::clear)
      .def(
          "advice",
          [](const TransferCounter& counter, const py::kwargs& thresholds) {
            const auto options =
                advice_options(thresholds, "TransferCounter.advice");
            try {
              return counter.advice(options);
            } catch (const std::logic_error&) {
              throw std::runtime_error(
                  "TransferCounter.advice: this counter records nothing for "
                  "advice (advice='off', the default); count with "
                  "count_transfers(advice='on') or "
                  "TransferCounter(advice='on')");
            }
          },
          "What the counted events say is worth changing: a list of "
          "Finding, largest estimated saving first. Keyword arguments set "
          "the thresholds (cunumpy._core.advice_thresholds). RuntimeError "
          "for a counter made with advice='off', the default.")
      .def("__repr__", [](const TransferCounter& c) {
        return "<TransferCounter total=" + std::to_string(c.total()) +
               " to_host=" + std::to_string(c.to_host()) +
               " to_device=" + std::to_string(c.to_device()) +
               " device_copy=" + std::to_string(c.device_copy()) +
               " syncs=" + std::to_string(c.syncs()) + ">";
      });

  py::class_<CountScope>(module, "CountTransfers",
                         "Context manager: counts transfers into a counter.")
      .def_readonly("counter", &CountScope::counter)
      .def("__enter__", &CountScope::enter)
      .def("__exit__", [](CountScope& scope, const py::args&) {
        scope.exit();
        return false;
      });

  module.def(
      "count_transfers",
      [](CounterPtr counter, const py::object& advice) {
        if (!counter)
          counter = std::make_shared<TransferCounter>(
              TransferCounter::default_max_events,
              advice.is_none() ? profiling::AdviceRecording::off
                               : parse_recording(advice, "count_transfers"));
        else if (!advice.is_none())
          throw py::type_error(
              "count_transfers: advice= is for a new counter; the counter "
              "given keeps what it was made with "
              "(TransferCounter(advice=...))");
        return CountScope{std::move(counter), std::nullopt};
      },
      py::arg("counter") = py::none(), py::arg("advice") = py::none(),
      "count_transfers(counter=None): context manager counting the copies, "
      "markers and syncs of every thread while the block runs, with the file "
      "and line that caused them; yields the TransferCounter. With `counter`, "
      "adds the events to it (accumulates over several blocks). Blocks "
      "nest.\n\n"
      "    with xp.profiling.count_transfers() as counter:\n"
      "        step(state, dt)\n"
      "    print(counter.report())");

  py::class_<NoTransfersScope>(module, "AssertNoTransfers",
                               "Context manager: AssertionError with the "
                               "report if the block copied between host and "
                               "device.")
      .def(py::init<>())
      .def_readonly("counter", &NoTransfersScope::counter)
      .def("__enter__", &NoTransfersScope::enter)
      .def("__exit__", [](NoTransfersScope& scope, const py::object& type,
                          const py::object&, const py::object&) {
        scope.exit(!type.is_none());
        return false;
      });

  module.def(
      "record_marker",
      [](const std::string& kind_name, const std::string& what) {
        const EventKind kind = parse_kind(kind_name);
        if (kind != EventKind::kernel_conversion && kind != EventKind::fallback)
          throw py::value_error("record_marker: markers are "
                                "'kernel_conversion' or 'fallback', not '" +
                                kind_name + "'");
        const PythonSite site = python_caller();
        Impl::record_marker(kind, what,
                            SourceLocation{site.file.c_str(), site.line,
                                           site.function.c_str()});
      },
      py::arg("kind"), py::arg("what"));

  module.def(
      "cuda_view",
      [] {
        const profiling::CudaView view = profiling::cuda_view();
        py::dict result;
        result["built"] = view.built;
        result["state"] = std::string(to_string(view.state));
        result["reason"] = view.reason;
        result["unified_memory"] = view.unified_memory;
        result["migrations_unseen"] = view.migrations_unseen;
        result["copy_records"] = view.copy_records;
        result["migration_records"] = view.migration_records;
        result["migrated_bytes"] = view.migrated_bytes;
        result["line"] = profiling::cuda_view_line(view);
        return result;
      },
      "What cunumpy sees of CUDA's own record of the process (CUPTI): its "
      "state ('on', 'off', 'unavailable', 'not built', 'not started'), why, "
      "and what it received (docs/cuda.md).");
  // Python's lists of kinds are the C++ definitions (event.hpp).
  const auto kind_names = [](bool (*keep)(EventKind)) {
    py::list kinds;
    for (EventKind kind : all_event_kinds)
      if (keep(kind))
        kinds.append(std::string(to_string(kind)));
    return py::tuple(kinds);
  };
  module.attr("event_kinds") = kind_names([](EventKind) { return true; });
  module.attr("transfer_kinds") =
      kind_names([](EventKind kind) { return is_transfer(kind); });
  module.attr("host_device_transfer_kinds") =
      kind_names([](EventKind kind) { return is_host_device_transfer(kind); });
  module.def("set_backtrace_depth", &profiling::set_backtrace_depth,
             py::arg("depth"));
  module.def("backtrace_depth", &profiling::backtrace_depth);
}

} // namespace cunumpy::python
