#ifndef CUNUMPY_SRC_ENVIRONMENT_HPP
#define CUNUMPY_SRC_ENVIRONMENT_HPP

#include <optional>
#include <string>

namespace cunumpy::Impl {

/// The value of environment variable `name`, or nothing when unset or empty.
std::optional<std::string> environment(const char* name);

/// An integer from environment variable `name` in [minimum, maximum]. An
/// unset variable gives `fallback`; a bad value prints one line on stderr
/// naming the variable and the accepted range, and gives `fallback`.
int environment_integer(const char* name, int fallback, int minimum,
                        int maximum);

/// One line on stderr, prefixed "cunumpy: ". Never throws.
void warn(const std::string& message) noexcept;

} // namespace cunumpy::Impl

#endif
