#ifndef CUNUMPY_TESTS_PROGRAMS_CHECK_HPP
#define CUNUMPY_TESTS_PROGRAMS_CHECK_HPP

// CHECK for test programs that run under ctest without GoogleTest (they need
// their own main: Kokkos tools loaded by environment, callbacks installed
// before cunumpy...). A failed check prints and sets the exit status.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdlib.h>
#include <string>
#include <unistd.h>

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

/// What `action` writes to stderr (file descriptor 2), captured through a
/// temporary file.
template <class Action> std::string stderr_of(Action action) {
  char path[] = "/tmp/cunumpy_stderr_XXXXXX";
  const int file = mkstemp(path);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(file, 2);
  action();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return text.str();
}

#endif
