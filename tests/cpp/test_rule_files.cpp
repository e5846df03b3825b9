// Rule files that are not what they seem: a FIFO, a device, a file too
// large, nesting that would overflow toml++'s stack, text that is not UTF-8
// or reaches undefined behaviour in Debian's toml++ 3.3.0, and values too
// long to echo. Each is refused with one error naming the file and what to
// do, before toml++ sees it.

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "test_helpers.hpp"

namespace {

using cunumpy::profiling::TransferBudget;

/// The documented cap of a rule file (docs/budgets.md).
constexpr std::size_t max_rule_bytes = std::size_t(32) << 20;
using cunumpy_tests::contains;
using cunumpy_tests::message_of;

/// A path in the test directory, removed when the test ends.
class TemporaryPath {
public:
  explicit TemporaryPath(const std::string& name)
      : path_(::testing::TempDir() + name) {
    std::remove(path_.c_str());
  }
  ~TemporaryPath() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

class TemporaryFile : public TemporaryPath {
public:
  TemporaryFile(const std::string& name, const std::string& text)
      : TemporaryPath(name) {
    std::ofstream(path(), std::ios::binary) << text;
  }
};

std::string file_error(const std::string& path) {
  return message_of<std::invalid_argument>(
      [&] { (void)TransferBudget::from_file(path); });
}

std::string text_error(const std::string& text) {
  return message_of<std::invalid_argument>(
      [&] { TransferBudget().require_toml(text, "rules.toml"); });
}

TEST(RuleFiles, AFifoIsRefusedWithoutWaitingForAWriter) {
  TemporaryPath fifo("rules.fifo");
  ASSERT_EQ(::mkfifo(fifo.path().c_str(), 0600), 0);
  auto reading =
      std::async(std::launch::async, [&] { return file_error(fifo.path()); });
  if (reading.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    // Blocked in open() or read(): a writer that closes at once ends it.
    const int writer = ::open(fifo.path().c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0)
      ::close(writer);
    FAIL() << "reading a FIFO as the rule file blocked";
  }
  EXPECT_TRUE(contains(reading.get(), "rule file '" + fifo.path() +
                                          "' is a FIFO (named pipe), not a "
                                          "regular file"));
}

TEST(RuleFiles, ADeviceIsRefusedBeforeReading) {
  // Read, /dev/zero would fill memory until std::bad_alloc.
  const std::string message = file_error("/dev/zero");
  EXPECT_TRUE(contains(message, "rule file '/dev/zero' is a character device, "
                                "not a regular file; rule files are read "
                                "whole: name a .toml file"));
}

TEST(RuleFiles, AFileOverTheSizeCapIsRefusedBeforeReading) {
  TemporaryPath large("large.toml");
  {
    const int fd = ::open(large.path().c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    // Sparse: no disk used, and no time spent reading it.
    ASSERT_EQ(::ftruncate(fd, off_t(max_rule_bytes) + 1), 0);
    ::close(fd);
  }
  EXPECT_TRUE(contains(file_error(large.path()),
                       "rule file '" + large.path() +
                           "' is larger than 32 MiB (33554433 bytes), the "
                           "most a rule file may hold"));
  // The same cap for text.
  const std::string text(max_rule_bytes + 1, '#');
  EXPECT_TRUE(contains(text_error(text),
                       "rules.toml: the rule text is larger than 32 MiB"));
}

TEST(RuleFiles, DeepNestingIsRefusedBeforeTomlParsesIt) {
  constexpr int levels = 50000;
  std::string header = "[phases";
  std::string dotted = "phases";
  std::string tables = "x = ";
  std::string arrays = "[phases.a]\nignore = ";
  for (int i = 0; i < levels; ++i) {
    header += ".a";
    dotted += ".a";
    tables += "{a=";
    arrays += "[";
  }
  header += "]\n";
  dotted += " = 1\n";
  for (const std::string& text : {header, dotted, tables, arrays}) {
    const std::string message = text_error(text);
    EXPECT_TRUE(contains(message, "nested more than 32 levels deep"))
        << text.substr(0, 40);
    EXPECT_LT(message.size(), 400u);
  }
  TemporaryFile file("deep.toml", header);
  EXPECT_TRUE(contains(file_error(file.path()),
                       file.path() + ":1:70: nested more than 32 levels"));
  // Just under the cap, toml++ parses it and the rule is judged as usual.
  std::string header_31 = "[phases";
  for (int i = 0; i < 30; ++i)
    header_31 += ".a";
  EXPECT_TRUE(contains(text_error(header_31 + "]\n"),
                       "rules.toml:1: key 'phases.a.a': unknown key"));
}

TEST(RuleFiles, EveryWayOfWritingARuleStillParses) {
  TransferBudget budget;
  budget.require_toml(R"(# Régles: comments may hold any UTF-8 text. ☃
[phases.integrate]   # a comment after a header
calls = 2
allow.to_host = { max_nbytes = 8, blocking = false }   # é
ignore = [
  "device_copy",   # kinds
  'sync',
]

[phases."caf\u00e9"]
[phases.'lit[e]ral.#name']
[phases.output.allow.to_host]
max_count = 10
[phases."multi"]
ignore = ["""device_copy"""]
)");
  EXPECT_TRUE(budget.rule("integrate"));
  EXPECT_TRUE(budget.rule("caf\xc3\xa9"));
  EXPECT_TRUE(budget.rule("lit[e]ral.#name"));
  ASSERT_TRUE(budget.rule("output"));
  EXPECT_EQ(budget.rule("output")
                ->allowed()
                .at(cunumpy::EventKind::to_host)
                .max_count(),
            10u);
  EXPECT_TRUE(budget.rule("multi"));
  // A byte order mark, as editors on Windows write.
  EXPECT_TRUE(
      TransferBudget().require_toml("\xEF\xBB\xBF[phases.a]\n").rule("a"));
}

TEST(RuleFiles, TextThatIsNotUtf8IsRefusedWithItsPosition) {
  struct Case {
    std::string text;
    const char* expected;
  };
  const Case cases[] = {
      {"# \xff\n[phases.a]\n", "rules.toml:1:3: not UTF-8 (byte 0xFF)"},
      {"[phases.a]\n# \xc0\xaf overlong\n",
       "rules.toml:2:3: not UTF-8 (byte 0xC0)"},
      {"# \xed\xa0\x80 surrogate\n", "rules.toml:1:3: not UTF-8 (byte 0xED)"},
      {"# \xf4\x90\x80\x80 above U+10FFFF\n", "rules.toml:1:3: not UTF-8"},
      {"[phases.a]\n# cut short \xe2\x82",
       "rules.toml:2:13: not UTF-8 (byte 0xE2)"},
  };
  for (const Case& c : cases)
    EXPECT_TRUE(contains(text_error(c.text), c.expected));
}

TEST(RuleFiles, NonAsciiOutsideCommentsIsRefused) {
  // Debian's toml++ 3.3.0 reaches TOML_UNREACHABLE (undefined behaviour)
  // when it asks whether such a character is whitespace: after a value,
  // in a quoted key, after a backslash in a multi-line string.
  struct Case {
    std::string text;
    const char* expected;
  };
  const Case cases[] = {
      {"s =2uo\xc9\x83"
       "ed",
       "rules.toml:1:7: character U+0243 outside a comment"},
      {"\xcc\xaa", "rules.toml:1:1: character U+032A outside a comment"},
      {"[phases.\"caf\xc3\xa9\"]\n", "rules.toml:1:13: character U+00E9"},
      {"[phases.a]\nignore = [\"\"\"\\\n\xc2\xa7\"\"\"]\n",
       "rules.toml:3:1: character U+00A7"},
      {"[phases.a]\nx = \"\"\"\\\xc2\xa7\"\"\"\n",
       "rules.toml:2:9: character U+00A7"},
      {"[phases.a]\nx = 'caf\xc3\xa9'\n", "rules.toml:2:9: character U+00E9"},
  };
  for (const Case& c : cases) {
    const std::string message = text_error(c.text);
    EXPECT_TRUE(contains(message, c.expected));
    EXPECT_TRUE(contains(message, "write the character of a phase name as a "
                                  "\\uXXXX escape in a quoted key"));
  }
}

TEST(RuleFiles, ErrorsEchoAnExcerptOfLongText) {
  const std::string long_text(5 << 20, 'x');
  const std::string kind =
      text_error("[phases.a]\nignore = [\"" + long_text + "\"]\n");
  EXPECT_TRUE(contains(kind, "rules.toml:2: key 'phases.a.ignore': unknown "
                             "event kind 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                             "...[5242816 bytes]...xxxx"));
  EXPECT_LT(kind.size(), 400u);
  const std::string key = text_error("[phases." + long_text + "]\ncals = 1\n");
  EXPECT_TRUE(contains(key, "key 'phases." + std::string(25, 'x') +
                                "...[5242828 bytes]..." + std::string(27, 'x') +
                                ".cals': unknown key"));
  EXPECT_LT(key.size(), 400u);
  // toml++'s own message quotes the table it cannot redefine.
  const std::string redefined =
      text_error("[phases." + long_text + "]\n[phases." + long_text + "]\n");
  EXPECT_TRUE(contains(redefined, "TOML syntax error"));
  EXPECT_LT(redefined.size(), 600u);
}

} // namespace
