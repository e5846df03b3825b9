// The table of environment variables (src/core/support/variables.cpp): the
// one description every reader, the plugin's --help and docs/plugin.md
// follow.

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

#include <cunumpy/advice.hpp>

#include "support/environment.hpp"
#include "support/variables.hpp"
#include "test_paths.hpp"

namespace {

using cunumpy::Impl::read_integer;
using cunumpy::Impl::variables;

TEST(Variables, DocsPluginMdHasTheTable) {
  std::ifstream file(CUNUMPY_SOURCE_DIR "/docs/plugin.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string docs = text.str();
  const std::string begin =
      "<!-- variables: src/core/support/variables.cpp -->\n";
  const std::string end = "<!-- end of variables -->";
  const auto from = docs.find(begin);
  const auto to = docs.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/plugin.md lost its markers";
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(docs.substr(from + begin.size(), to - from - begin.size()),
            cunumpy::Impl::variables_markdown())
      << "docs/plugin.md's table of variables differs from the table: "
         "paste variables_markdown()'s text between the markers";
}

TEST(Variables, DefaultsAreTheLibrarysOwn) {
  // Unset, each integer reads as its documented default: the same as the
  // library's own defaults of the same settings.
  for (const auto& entry : variables())
    ASSERT_EQ(std::getenv(std::string(entry.name).c_str()), nullptr)
        << entry.name << " is set in the test's environment";
  const cunumpy::profiling::AdviceOptions options;
  EXPECT_EQ(read_integer("CUNUMPY_ADVISE_MIN_SAVING_US") * 1e-6,
            options.min_saving_seconds);
  EXPECT_EQ(std::uint64_t(read_integer("CUNUMPY_ADVISE_MIN_CALLS")),
            options.min_calls);
  EXPECT_EQ(std::uint64_t(read_integer("CUNUMPY_ADVISE_SMALL_BYTES")),
            options.small_bytes);
  EXPECT_EQ(std::uint64_t(read_integer("CUNUMPY_ADVISE_MANY_COPIES")),
            options.many_copies);
  EXPECT_EQ(std::uint64_t(read_integer("CUNUMPY_ADVISE_PAGEABLE_BYTES")),
            options.pageable_min_bytes);
  EXPECT_EQ(std::uint64_t(read_integer("CUNUMPY_ADVISE_FRESH_BYTES")),
            options.fresh_min_bytes);
  EXPECT_EQ(read_integer("CUNUMPY_ADVISE_PINNED_MBPS") * 1e6,
            options.pinned_bandwidth);
}

TEST(Variables, EveryIntegerHasARangeAndADefaultInIt) {
  for (const auto& entry : variables()) {
    if (entry.kind != cunumpy::Impl::Variable::Kind::integer)
      continue;
    SCOPED_TRACE(std::string(entry.name));
    EXPECT_LE(entry.minimum, entry.maximum);
    EXPECT_TRUE(cunumpy::Impl::parse_environment_integer(
        entry.fallback, entry.minimum, entry.maximum));
  }
}

} // namespace
