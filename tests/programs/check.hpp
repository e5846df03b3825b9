#ifndef CUNUMPY_TESTS_PROGRAMS_CHECK_HPP
#define CUNUMPY_TESTS_PROGRAMS_CHECK_HPP

// CHECK for test programs that run under ctest without GoogleTest (they need
// their own main: Kokkos tools loaded by environment, callbacks installed
// before cunumpy...). A failed check prints and sets the exit status.

#include <iostream>

inline int& failures() {
  static int count = 0;
  return count;
}

#define CHECK_EQ(actual, expected)                                             \
  do {                                                                         \
    const auto actual_ = (actual);                                             \
    const auto expected_ = (expected);                                         \
    if (!(actual_ == expected_)) {                                             \
      std::cerr << __FILE__ << ":" << __LINE__ << ": " #actual " is "          \
                << actual_ << ", expected " << expected_ << "\n";              \
      ++failures();                                                            \
    }                                                                          \
  } while (false)

#endif
