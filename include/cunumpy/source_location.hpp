#ifndef CUNUMPY_SOURCE_LOCATION_HPP
#define CUNUMPY_SOURCE_LOCATION_HPP

namespace cunumpy {

/// The file and line of a call into cunumpy.
///
/// Every cunumpy function that can copy takes a trailing
/// `SourceLocation where = SourceLocation::current()` argument, so the
/// compiler fills in the caller's file and line (as C++20's
/// std::source_location does, with builtins GCC, Clang and nvcc have in C++17).
/// Front ends (the Python module) pass their own location explicitly.
struct SourceLocation {
  const char* file = nullptr;
  int line = 0;
  const char* function = nullptr;

#if defined(__GNUC__) || defined(__clang__)
  static constexpr SourceLocation
  current(const char* file = __builtin_FILE(), int line = __builtin_LINE(),
          const char* function = __builtin_FUNCTION()) noexcept {
    return {file, line, function};
  }
#else
  static constexpr SourceLocation current() noexcept {
    return {};
  }
#endif

  constexpr bool known() const noexcept {
    return file != nullptr && file[0] != '\0';
  }
};

} // namespace cunumpy

#endif
