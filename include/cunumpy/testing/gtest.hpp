#ifndef CUNUMPY_TESTING_GTEST_HPP
#define CUNUMPY_TESTING_GTEST_HPP

// GoogleTest assertions that a statement makes no host/device transfer:
//
//     EXPECT_NO_TRANSFERS(step(state, dt));
//
// On failure the message is cunumpy's transfer report, naming the file and
// line of every copy. Device-only copies and syncs are allowed, as in
// cunumpy::profiling::assert_no_transfers.

#include <gtest/gtest.h>
#include <string>

#include <cunumpy/assert_no_transfers.hpp>

namespace cunumpy::testing::Impl {
/// Runs `f`; returns an empty string when it made no transfer, else the
/// report, which names `where` (the test's line). Exceptions other than
/// TransferError propagate.
template <class F> std::string transfers_of(F&& f, SourceLocation where) {
  try {
    cunumpy::profiling::assert_no_transfers(std::forward<F>(f), where);
  } catch (const cunumpy::TransferError& error) {
    return error.what();
  }
  return {};
}
} // namespace cunumpy::testing::Impl

#define CUNUMPY_TEST_NO_TRANSFERS_(statement, fail)                            \
  do {                                                                         \
    const std::string cunumpy_report_ =                                        \
        ::cunumpy::testing::Impl::transfers_of(                                \
            [&]() { statement; },                                              \
            ::cunumpy::SourceLocation{__FILE__, __LINE__, nullptr});           \
    if (!cunumpy_report_.empty())                                              \
      fail() << "Expected no host/device transfers in: " #statement "\n"       \
             << cunumpy_report_;                                               \
  } while (false)

#define EXPECT_NO_TRANSFERS(statement)                                         \
  CUNUMPY_TEST_NO_TRANSFERS_(statement, ADD_FAILURE)
#define ASSERT_NO_TRANSFERS(statement)                                         \
  CUNUMPY_TEST_NO_TRANSFERS_(statement, FAIL)

#endif
