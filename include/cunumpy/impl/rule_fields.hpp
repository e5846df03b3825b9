#ifndef CUNUMPY_IMPL_RULE_FIELDS_HPP
#define CUNUMPY_IMPL_RULE_FIELDS_HPP

// The checks of a rule's fields, for every front end that reads rules from
// values it does not control: the TOML rule file and the Python bindings.
// One checker, one set of names and messages.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <cunumpy/transfer_budget.hpp>

namespace cunumpy::Impl {

/// "max_nbytes, max_count, max_total_bytes, blocking or implicit": the
/// limits a rule can set on a kind, for messages.
std::string rule_limit_names();

/// The limit a rule can set on a kind (max_nbytes, max_count,
/// max_total_bytes, blocking, implicit) named `name`, or nothing.
std::optional<profiling::Limit> parse_rule_limit(std::string_view name);

/// A value a front end gives for a limit or a count (a TOML node, a Python
/// object).
struct LimitValue {
  enum class Type { integer, boolean, other };
  Type type = Type::other;
  bool negative = false;       ///< an integer below 0
  std::uint64_t magnitude = 0; ///< its absolute value, when it fits
  bool fits = true;            ///< false: an integer of 2**64 or more
  bool boolean = false;
  /// How the front end names the value in messages: "a string" (TOML),
  /// "'x'" or "True" (Python); for integers, their decimal digits.
  std::string text;
};

/// What is wrong with a value ("" when nothing is), and whether it is of
/// the wrong type (a front end raises a type error then).
struct FieldProblem {
  std::string text;
  bool wrong_type = false;
  explicit operator bool() const noexcept { return !text.empty(); }
};

/// Sets `limit` of `limits` from `value`: counts and sizes are
/// non-negative integers below 2**64, blocking and implicit booleans. The
/// problem's text is what follows the field's name in a message: "must be a
/// non-negative integer, not -1".
FieldProblem set_limit(profiling::Limits& limits, profiling::Limit limit,
                       const LimitValue& value);
/// The same for a count (`calls`): a non-negative integer below 2**64.
FieldProblem count_value(const LimitValue& value, std::uint64_t& count);

} // namespace cunumpy::Impl

#endif
