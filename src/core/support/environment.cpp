#include "support/environment.hpp"

#include <cstdio>
#include <cstdlib>

#include "support/excerpt.hpp"

namespace cunumpy::Impl {

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0')
    return std::nullopt;
  return std::string(value);
}

std::optional<int> parse_environment_integer(std::string_view text, int minimum,
                                             int maximum) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && blank(text.back()))
    text.remove_suffix(1);
  if (text.empty())
    return std::nullopt;
  long long value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > maximum)
      return std::nullopt; // also keeps `value` far from overflowing
  }
  if (value < minimum)
    return std::nullopt;
  return static_cast<int>(value);
}

std::optional<int> environment_integer(const char* name, int minimum,
                                       int maximum,
                                       const std::string& otherwise) {
  const char* value = std::getenv(name);
  if (value == nullptr)
    return std::nullopt;
  if (const auto parsed = parse_environment_integer(value, minimum, maximum))
    return parsed;
  warn(std::string(name) + "=\"" + excerpt(value) +
       "\" is not an integer in [" + std::to_string(minimum) + ", " +
       std::to_string(maximum) + "]; " + otherwise);
  return std::nullopt;
}

int environment_integer(const char* name, int fallback, int minimum,
                        int maximum) {
  return environment_integer(name, minimum, maximum,
                             "using " + std::to_string(fallback))
      .value_or(fallback);
}

void warn(const std::string& message) noexcept {
  std::fprintf(stderr, "cunumpy: %s\n", message.c_str());
  std::fflush(stderr);
}

} // namespace cunumpy::Impl
