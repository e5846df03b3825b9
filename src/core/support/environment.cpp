#include "support/environment.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace cunumpy::Impl {

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0')
    return std::nullopt;
  return std::string(value);
}

int environment_integer(const char* name, int fallback, int minimum,
                        int maximum) {
  const auto text = environment(name);
  if (!text)
    return fallback;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str() || *end != '\0' || value < minimum ||
      value > maximum) {
    warn(std::string(name) + "=\"" + *text + "\" is not an integer in [" +
         std::to_string(minimum) + ", " + std::to_string(maximum) +
         "]; using " + std::to_string(fallback));
    return fallback;
  }
  return static_cast<int>(value);
}

void warn(const std::string& message) noexcept {
  std::fprintf(stderr, "cunumpy: %s\n", message.c_str());
  std::fflush(stderr);
}

} // namespace cunumpy::Impl
