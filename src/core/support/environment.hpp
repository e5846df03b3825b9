#ifndef CUNUMPY_SRC_ENVIRONMENT_HPP
#define CUNUMPY_SRC_ENVIRONMENT_HPP

#include <optional>
#include <string>
#include <string_view>

namespace cunumpy::Impl {

/// The value of environment variable `name`, or nothing when unset or empty.
std::optional<std::string> environment(const char* name);

/// The integer a numeric variable holds, under the one rule of every
/// numeric variable cunumpy reads: decimal digits, optionally surrounded by
/// spaces and tabs, in [minimum, maximum] (minimum >= 0). Nothing for
/// anything else: an empty or blank value, a sign ("-0", "+5"), any other
/// character, a number out of range.
std::optional<int> parse_environment_integer(std::string_view text, int minimum,
                                             int maximum);

/// The integer of environment variable `name` (parse_environment_integer):
/// nothing when it is unset; for a bad value, an empty one included, one
/// line on stderr naming the variable, an excerpt of its value and the
/// range, then `otherwise` ("using 32"), and nothing.
std::optional<int> environment_integer(const char* name, int minimum,
                                       int maximum,
                                       const std::string& otherwise);

/// environment_integer, `fallback` when unset or bad.
int environment_integer(const char* name, int fallback, int minimum,
                        int maximum);

/// One line on stderr, prefixed "cunumpy: ". Never throws.
void warn(const std::string& message) noexcept;

} // namespace cunumpy::Impl

#endif
