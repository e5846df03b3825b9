// The TOML rule file shared by the C++ library, the Python module and the
// plugin:
//
//     [phases.integrate]
//     calls = 100
//     allow.to_host = { max_nbytes = 8, blocking = false }
//     ignore = ["device_copy", "sync"]
//
// Every mistake is an error naming the file, the line and the key: a typo
// must never silently allow a transfer.

#include <stdexcept>
#include <toml++/toml.h>

#include <cunumpy/impl/rule_fields.hpp>

#include "consumers/budget_state.hpp"
#include "consumers/rule_file_input.hpp"
#include "support/excerpt.hpp"

namespace cunumpy::Impl {
namespace {

class RuleFileError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

[[noreturn]] void fail(const std::string& source, const toml::node& node,
                       const std::string& key, const std::string& problem) {
  std::string where = source;
  if (node.source().begin.line > 0)
    where += ":" + std::to_string(node.source().begin.line);
  throw RuleFileError(where + ": key '" + excerpt(key) + "': " + problem);
}

std::string kind_names() {
  std::string text;
  for (EventKind kind : all_event_kinds)
    text += (text.empty() ? "" : ", ") + std::string(to_string(kind));
  return text;
}

EventKind parse_kind(const std::string& source, const toml::node& node,
                     const std::string& key, std::string_view name) {
  if (auto kind = parse_event_kind(name))
    return *kind;
  fail(source, node, key,
       "unknown event kind '" + excerpt(name) + "' (expected one of " +
           kind_names() + ")");
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
  case toml::node_type::string:
    return "a string";
  case toml::node_type::floating_point:
    return "a float";
  case toml::node_type::boolean:
    return "a boolean";
  case toml::node_type::table:
    return "a table";
  case toml::node_type::array:
    return "an array";
  case toml::node_type::integer:
    return "an integer";
  default:
    return "a date or time";
  }
}

/// A TOML value as the limit checkers see it.
LimitValue limit_value(const toml::node& node) {
  LimitValue value;
  value.text = type_name(node);
  if (const auto* integer = node.as_integer()) {
    const std::int64_t number = integer->get();
    value.type = LimitValue::Type::integer;
    value.negative = number < 0;
    value.magnitude = number < 0 ? std::uint64_t(0) - std::uint64_t(number)
                                 : std::uint64_t(number);
    value.text = std::to_string(number);
  } else if (const auto* flag = node.as_boolean()) {
    value.type = LimitValue::Type::boolean;
    value.boolean = flag->get();
  }
  return value;
}

std::uint64_t parse_count(const std::string& source, const toml::node& node,
                          const std::string& key) {
  std::uint64_t count = 0;
  if (const FieldProblem problem = count_value(limit_value(node), count))
    fail(source, node, key, problem.text);
  return count;
}

bool parse_flag(const std::string& source, const toml::node& node,
                const std::string& key) {
  const auto* value = node.as_boolean();
  if (value == nullptr)
    fail(source, node, key, "must be true or false, not " + type_name(node));
  return value->get();
}

profiling::Limits parse_limits(const std::string& source,
                               const toml::node& node, const std::string& key) {
  const auto* table = node.as_table();
  if (table == nullptr)
    fail(source, node, key,
         "must be a table of limits, e.g. { max_nbytes = 8 }");
  profiling::Limits limits;
  for (const auto& [name, value] : *table) {
    const std::string limit_key = key + "." + std::string(name.str());
    const auto limit = parse_rule_limit(name.str());
    if (!limit)
      fail(source, value, limit_key,
           "unknown limit (expected " + rule_limit_names() + ")");
    if (const FieldProblem problem =
            set_limit(limits, *limit, limit_value(value)))
      fail(source, value, limit_key, problem.text);
  }
  return limits;
}

profiling::Rule parse_phase(const std::string& source, const toml::node& node,
                            const std::string& key) {
  const auto* table = node.as_table();
  if (table == nullptr)
    fail(source, node, key, "must be a table ([" + key + "])");
  profiling::Rule rule;
  for (const auto& [name, value] : *table) {
    const std::string field = key + "." + std::string(name.str());
    if (name.str() == "calls") {
      rule.calls(parse_count(source, value, field));
    } else if (name.str() == "optional") {
      rule.optional(parse_flag(source, value, field));
    } else if (name.str() == "ignore") {
      const auto* kinds = value.as_array();
      if (kinds == nullptr)
        fail(source, value, field,
             "must be an array of event kinds, e.g. [\"device_copy\", "
             "\"sync\"]");
      std::set<EventKind> ignored;
      for (const auto& element : *kinds) {
        const auto* kind_name = element.as_string();
        if (kind_name == nullptr)
          fail(source, element, field, "must contain event kind names");
        ignored.insert(parse_kind(source, element, field, kind_name->get()));
      }
      rule.ignore(std::move(ignored));
    } else if (name.str() == "allow") {
      const auto* allowed = value.as_table();
      if (allowed == nullptr)
        fail(source, value, field,
             "must be a table of event kinds, e.g. allow.to_host = { "
             "max_nbytes = 8 }");
      for (const auto& [kind_name, limits] : *allowed) {
        const std::string kind_key = field + "." + std::string(kind_name.str());
        rule.allow(parse_kind(source, limits, kind_key, kind_name.str()),
                   parse_limits(source, limits, kind_key));
      }
    } else {
      fail(source, value, field,
           "unknown key (expected calls, allow, ignore or optional)");
    }
  }
  return rule;
}

} // namespace

std::vector<std::pair<std::string, profiling::Rule>>
parse_rules(std::string_view text, const std::string& source) {
  check_rule_text(text, source);
  toml::table document;
  try {
    document = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    throw std::invalid_argument(
        source + ":" + std::to_string(error.source().begin.line) + ":" +
        std::to_string(error.source().begin.column) +
        ": TOML syntax error: " + excerpt(error.description(), 256));
  }
  std::vector<std::pair<std::string, profiling::Rule>> rules;
  for (const auto& [name, value] : document) {
    if (name.str() != "phases")
      fail(source, value, std::string(name.str()),
           "unknown key (a rule file has only [phases.<name>] tables)");
    const auto* phases = value.as_table();
    if (phases == nullptr)
      fail(source, value, "phases", "must be a table of phases");
    for (const auto& [phase_name, phase] : *phases) {
      const std::string key = "phases." + std::string(phase_name.str());
      profiling::Rule rule = parse_phase(source, phase, key);
      std::string where = source;
      if (phase.source().begin.line > 0)
        where += ":" + std::to_string(phase.source().begin.line);
      validate_rule(excerpt(phase_name.str()), rule,
                    where + ": key '" + excerpt(key) + "': ");
      rules.emplace_back(std::string(phase_name.str()), std::move(rule));
    }
  }
  return rules;
}

} // namespace cunumpy::Impl
