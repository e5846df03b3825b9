// Rules, limits and violations: their names and how reports write them.

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include <cunumpy/impl/rule_fields.hpp>
#include <cunumpy/transfer_budget.hpp>

#include "consumers/budget_state.hpp"
#include "consumers/counter_state.hpp"
#include "support/excerpt.hpp"

namespace cunumpy {
namespace profiling {
namespace {

/// Every limit's name, in the order of the enum.
constexpr std::array<std::string_view, 11> limit_names = {
    "forbidden",       "max_nbytes",       "max_count",
    "max_total_bytes", "blocking",         "implicit",
    "calls",           "never_entered",    "events_lost",
    "no_device",       "migrations_unseen"};

std::string bool_text(bool value) {
  return value ? "true" : "false";
}

std::string join_kinds(const std::set<EventKind>& kinds) {
  std::string text;
  for (EventKind kind : all_event_kinds) {
    if (kinds.count(kind) == 0)
      continue;
    if (!text.empty())
      text += ", ";
    text += to_string(kind);
  }
  return text.empty() ? "nothing" : text;
}

} // namespace

Verdict verdict(const std::vector<Violation>& violations) noexcept {
  Verdict result = Verdict::ok;
  for (const Violation& violation : violations) {
    const Verdict one = violation.limit == Limit::events_lost
                            ? Verdict::incomplete
                        : violation.limit == Limit::no_device ||
                                violation.limit == Limit::migrations_unseen
                            ? Verdict::unchecked
                            : Verdict::broken;
    result = std::min(result, one);
  }
  return result;
}

std::string_view to_string(Verdict verdict) noexcept {
  switch (verdict) {
  case Verdict::broken:
    return "broken";
  case Verdict::incomplete:
    return "incomplete";
  case Verdict::unchecked:
    return "unchecked";
  case Verdict::ok:
    break;
  }
  return "ok";
}

std::string_view to_string(Limit limit) noexcept {
  return limit_names[static_cast<std::size_t>(limit)];
}

std::optional<Limit> parse_limit(std::string_view name) noexcept {
  for (std::size_t i = 0; i < limit_names.size(); ++i)
    if (limit_names[i] == name)
      return static_cast<Limit>(i);
  return std::nullopt;
}

std::string Limits::str() const {
  std::string text;
  const auto add = [&](Limit limit, const std::string& value) {
    if (!text.empty())
      text += ", ";
    text += std::string(to_string(limit)) + "=" + value;
  };
  if (max_nbytes_)
    add(Limit::max_nbytes, std::to_string(*max_nbytes_));
  if (max_count_)
    add(Limit::max_count, std::to_string(*max_count_));
  if (max_total_bytes_)
    add(Limit::max_total_bytes, std::to_string(*max_total_bytes_));
  if (blocking_)
    add(Limit::blocking, bool_text(*blocking_));
  if (implicit_)
    add(Limit::implicit, bool_text(*implicit_));
  return text.empty() ? "no limits" : text;
}

std::string Rule::str() const {
  std::string text = "allow ";
  if (allowed_.empty()) {
    text += "nothing";
  } else {
    bool first = true;
    for (const auto& [kind, limits] : allowed_) {
      text += (first ? "" : ", ") + std::string(to_string(kind)) + " (" +
              limits.str() + ")";
      first = false;
    }
  }
  text += "; ignore " + join_kinds(ignored_);
  if (calls_)
    text += "; calls=" + std::to_string(*calls_);
  if (optional_)
    text += "; optional";
  return text;
}

std::string Violation::str() const {
  const std::string what = kind ? std::string(to_string(*kind)) : "";
  std::string text = limit == Limit::events_lost || limit == Limit::no_device ||
                             limit == Limit::migrations_unseen
                         ? ""
                         : "phase '" + Impl::printable(phase) + "': ";
  switch (limit) {
  case Limit::calls:
    text += "calls=" + allowed + " required, got " + actual;
    break;
  case Limit::never_entered:
    text += "never entered while counting, so its rule never applied (mark "
            "the rule optional if the phase may not run)";
    break;
  case Limit::events_lost:
    text += actual == "unknown"
                ? "events may be missing (how many is not known)"
                : actual + " event(s) are missing";
    text += ", so no rule can be trusted to hold";
    break;
  case Limit::no_device:
    text += "no copy was checked: " + actual;
    break;
  case Limit::migrations_unseen:
    text += "migrations were not checked: " + actual;
    break;
  case Limit::forbidden:
    text += what + " is not allowed, got " + actual + " event(s)";
    break;
  case Limit::max_count:
    text +=
        what + " max_count=" + allowed + " exceeded: " + actual + " event(s)";
    break;
  case Limit::max_total_bytes:
    text += what + " max_total_bytes=" + allowed + " exceeded: " + actual +
            " bytes";
    break;
  case Limit::max_nbytes:
    text += what + " max_nbytes=" + allowed + " exceeded: an event of " +
            actual + " bytes";
    break;
  case Limit::blocking:
  case Limit::implicit:
    text +=
        what + " must have " + std::string(to_string(limit)) + "=" + allowed;
    break;
  }
  text += "\n";
  for (const std::string& detail : details)
    text += "  " + Impl::printable(detail) + "\n";
  for (const auto& summary : events)
    text += "  " + Impl::format_site_line(summary) + "\n";
  return text;
}

} // namespace profiling

namespace Impl {

namespace {

constexpr profiling::Limit rule_limits[] = {
    profiling::Limit::max_nbytes, profiling::Limit::max_count,
    profiling::Limit::max_total_bytes, profiling::Limit::blocking,
    profiling::Limit::implicit};

} // namespace

std::string rule_limit_names() {
  std::string text;
  const std::size_t count = std::size(rule_limits);
  for (std::size_t i = 0; i < count; ++i)
    text += std::string(i == 0           ? ""
                        : i + 1 == count ? " or "
                                         : ", ") +
            std::string(to_string(rule_limits[i]));
  return text;
}

std::optional<profiling::Limit> parse_rule_limit(std::string_view name) {
  const auto limit = profiling::parse_limit(name);
  for (profiling::Limit known : rule_limits)
    if (limit == known)
      return limit;
  return std::nullopt;
}

FieldProblem count_value(const LimitValue& value, std::uint64_t& count) {
  if (value.type != LimitValue::Type::integer)
    return {"must be a non-negative integer, not " + value.text, true};
  if (value.negative)
    return {"must be a non-negative integer, not " + value.text, false};
  if (!value.fits)
    return {"must be a non-negative integer of at most 2**64 - 1, not " +
                value.text,
            false};
  count = value.magnitude;
  return {};
}

FieldProblem set_limit(profiling::Limits& limits, profiling::Limit limit,
                       const LimitValue& value) {
  using profiling::Limit;
  if (limit == Limit::blocking || limit == Limit::implicit) {
    if (value.type != LimitValue::Type::boolean)
      return {"must be true or false, not " + value.text, true};
    if (limit == Limit::blocking)
      limits.blocking(value.boolean);
    else
      limits.implicit(value.boolean);
    return {};
  }
  std::uint64_t count = 0;
  if (FieldProblem problem = count_value(value, count))
    return problem;
  if (limit == Limit::max_nbytes)
    limits.max_nbytes(count);
  else if (limit == Limit::max_count)
    limits.max_count(count);
  else
    limits.max_total_bytes(count);
  return {};
}

void validate_rule(const std::string& phase, const profiling::Rule& rule,
                   const std::string& where) {
  for (const auto& [kind, limits] : rule.allowed()) {
    if (rule.ignored().count(kind) != 0)
      throw std::invalid_argument(
          where + "phase '" + phase + "': '" + std::string(to_string(kind)) +
          "' is both allowed and ignored, so its limits would not be "
          "checked; remove it from ignore (the default ignores device_copy "
          "and sync)");
  }
}

} // namespace Impl
} // namespace cunumpy
