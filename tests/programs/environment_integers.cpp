// The one rule of every numeric environment variable (CUNUMPY_BACKTRACE,
// the MPI rank variables): decimal digits, optionally surrounded by spaces
// and tabs, in range. Anything else, an empty value included, is one line on
// stderr naming the variable, and the default.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

#include "check.hpp"
#include "support/environment.hpp"

namespace {

std::string parsed(const char* text) {
  const auto value = cunumpy::Impl::parse_environment_integer(text, 0, 64);
  return value ? std::to_string(*value) : "refused";
}

} // namespace

int main() {
  // Accepted: digits, with blanks around them.
  CHECK_EQ(parsed("5"), "5");
  CHECK_EQ(parsed(" 5"), "5");
  CHECK_EQ(parsed("5 "), "5");
  CHECK_EQ(parsed("\t7\t"), "7");
  CHECK_EQ(parsed("007"), "7");
  CHECK_EQ(parsed("0"), "0");
  CHECK_EQ(parsed("64"), "64");
  // Refused: everything else.
  for (const char* text :
       {"", " ", "\t", "-0", "-1", "+5", "65", "5x", "0x10", "5 5", "1e1",
        "5\n", "99999999999999999999999999", "\xff", "٥"})
    CHECK_EQ(parsed(text), std::string("refused"));

  using cunumpy::Impl::environment_integer;
  ::unsetenv("CUNUMPY_TEST_INTEGER");
  CHECK_EQ(stderr_of([] {
             CHECK_EQ(environment_integer("CUNUMPY_TEST_INTEGER", 32, 0, 64),
                      32);
           }),
           std::string()); // unset: the default, silently
  const auto said_for = [](const char* value, int expected) {
    ::setenv("CUNUMPY_TEST_INTEGER", value, 1);
    return stderr_of([&] {
      CHECK_EQ(environment_integer("CUNUMPY_TEST_INTEGER", 32, 0, 64),
               expected);
    });
  };
  CHECK_EQ(said_for(" 5 ", 5), std::string());
  CHECK_EQ(said_for("", 32),
           std::string("cunumpy: CUNUMPY_TEST_INTEGER=\"\" is not an integer "
                       "in [0, 64]; using 32\n"));
  CHECK_EQ(said_for("-0", 32),
           std::string("cunumpy: CUNUMPY_TEST_INTEGER=\"-0\" is not an "
                       "integer in [0, 64]; using 32\n"));
  // A huge value is echoed as an excerpt, control characters escaped.
  const std::string huge(1 << 20, '9');
  const std::string said = said_for(huge.c_str(), 32);
  CHECK_EQ(said.size() < 200, true);
  CHECK_EQ(said.find("bytes]...") != std::string::npos, true);
  CHECK_EQ(said_for("5\n", 32),
           std::string("cunumpy: CUNUMPY_TEST_INTEGER=\"5\\x0a\" is not an "
                       "integer in [0, 64]; using 32\n"));
  // The variant without a default names what happens instead.
  ::setenv("CUNUMPY_TEST_INTEGER", "x", 1);
  CHECK_EQ(stderr_of([] {
             CHECK_EQ(cunumpy::Impl::environment_integer("CUNUMPY_TEST_INTEGER",
                                                         0, 10, "ignored")
                          .has_value(),
                      false);
           }),
           std::string("cunumpy: CUNUMPY_TEST_INTEGER=\"x\" is not an integer "
                       "in [0, 10]; ignored\n"));
  return failures() == 0 ? 0 : 1;
}
