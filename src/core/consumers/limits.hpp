#ifndef CUNUMPY_SRC_CONSUMERS_LIMITS_HPP
#define CUNUMPY_SRC_CONSUMERS_LIMITS_HPP

#include <cstdint>
#include <string>
#include <string_view>

#include <cunumpy/transfer_budget.hpp>

namespace cunumpy::Impl {

/// "max_nbytes, max_count, max_total_bytes, blocking or implicit": the
/// limits a rule can set on a kind, for messages.
std::string rule_limit_names();

/// A value a front end gives for a limit or a count (a TOML node, a Python
/// object).
struct LimitValue {
  enum class Type { integer, boolean, other };
  Type type = Type::other;
  /// The integer, when it fits in 64 bits (negative ones too).
  std::int64_t integer = 0;
  bool fits = true; ///< false: an integer outside [-2^63, 2^63)
  bool boolean = false;
  /// How the front end names the value in messages: "a string" (TOML),
  /// "'x'" or "True" (Python).
  std::string text;
};

/// Sets limit `name` of `limits` from `value`. Returns what is wrong (""
/// when nothing is): an unknown limit, or a value that does not fit it
/// (counts and sizes are non-negative integers, blocking and implicit
/// booleans). The caller says where. One checker for the rule file and the
/// bindings.
std::string set_limit(profiling::Limits& limits, std::string_view name,
                      const LimitValue& value);
/// The same for a count (`calls`): a non-negative integer.
std::string count_value(const LimitValue& value, std::uint64_t& count);

} // namespace cunumpy::Impl

#endif
