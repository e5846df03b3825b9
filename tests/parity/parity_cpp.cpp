// The C++ front end of the budget parity test: case <index> of the cases
// file, its rules built with the C++ API (Rule, Limits, TransferBudget::
// require), its events made through Kokkos' tools entry points; prints the
// violations as JSON (tests/parity/test_parity.py compares them with the
// Python module's and the plugin's). With "after", the rules are set after
// the events, as a test that decides its rules at the end does.
//
//   parity_cpp <cases.json> <index> [after]

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "parity_events.hpp"

namespace {

using namespace cunumpy::profiling;
using cunumpy::EventKind;

EventKind kind_named(const std::string& name) {
  const auto kind = cunumpy::parse_event_kind(name);
  if (!kind)
    throw std::invalid_argument("parity: unknown kind '" + name + "'");
  return *kind;
}

Limits limits_of(const nlohmann::json& fields) {
  Limits limits;
  for (const auto& [key, value] : fields.items()) {
    if (key == "max_nbytes")
      limits.max_nbytes(value.get<std::uint64_t>());
    else if (key == "max_count")
      limits.max_count(value.get<std::uint64_t>());
    else if (key == "max_total_bytes")
      limits.max_total_bytes(value.get<std::uint64_t>());
    else if (key == "blocking")
      limits.blocking(value.get<bool>());
    else if (key == "implicit")
      limits.implicit(value.get<bool>());
    else
      throw std::invalid_argument("parity: unknown limit '" + key + "'");
  }
  return limits;
}

Rule rule_of(const nlohmann::json& fields) {
  Rule rule;
  for (const auto& [key, value] : fields.items()) {
    if (key == "allow") {
      for (const auto& [kind, limits] : value.items())
        rule.allow(kind_named(kind), limits_of(limits));
    } else if (key == "ignore") {
      std::set<EventKind> ignored;
      for (const auto& kind : value)
        ignored.insert(kind_named(kind.get<std::string>()));
      rule.ignore(std::move(ignored));
    } else if (key == "calls") {
      rule.calls(value.get<std::uint64_t>());
    } else if (key == "optional") {
      rule.optional(value.get<bool>());
    } else {
      throw std::invalid_argument("parity: unknown rule field '" + key + "'");
    }
  }
  return rule;
}

nlohmann::json violation_json(const Violation& violation) {
  nlohmann::json events = nlohmann::json::array();
  for (const SiteSummary& summary : violation.events)
    events.push_back({{"kind", std::string(to_string(summary.kind))},
                      {"what", summary.what},
                      {"blocking", summary.blocking},
                      {"implicit", summary.implicit},
                      {"count", summary.count},
                      {"bytes", summary.nbytes},
                      {"max_bytes", summary.max_nbytes}});
  return {{"phase", violation.phase},
          {"kind", violation.kind
                       ? nlohmann::json(std::string(to_string(*violation.kind)))
                       : nullptr},
          {"limit", std::string(to_string(violation.limit))},
          {"allowed", violation.allowed},
          {"actual", violation.actual},
          {"details", violation.details},
          {"message", violation.str()},
          {"events", events}};
}

} // namespace

int main(int argc, char** argv) {
  const bool rules_after = argc == 4 && std::string(argv[3]) == "after";
  if (argc != 3 && !rules_after) {
    std::cerr << "usage: parity_cpp <cases.json> <index> [after]\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  const nlohmann::json test_case =
      cunumpy_parity::read_case(argv[1], std::stoul(argv[2]));
  TransferBudget budget;
  auto require_rules = [&] {
    for (const auto& [phase, fields] : test_case.at("rules").items())
      budget.require(phase, rule_of(fields));
  };
  if (!rules_after)
    require_rules();
  cunumpy_parity::run_case(test_case.at("events"));
  if (rules_after)
    require_rules();
  nlohmann::json violations = nlohmann::json::array();
  for (const Violation& violation : budget.violations())
    violations.push_back(violation_json(violation));
  std::cout << violations.dump(1) << "\n";
  return 0;
}
