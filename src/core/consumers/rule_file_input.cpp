#include "consumers/rule_file_input.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "support/excerpt.hpp"
#include "support/file_kind.hpp"

namespace cunumpy::Impl {
namespace {

std::invalid_argument rule_file_problem(const std::string& path,
                                        const std::string& what) {
  return std::invalid_argument("cunumpy::TransferBudget: rule file '" +
                               excerpt(path, 256) + "' " + what);
}

std::invalid_argument cannot_read(const std::string& path) {
  return std::invalid_argument("cunumpy::TransferBudget: cannot read rule "
                               "file '" +
                               excerpt(path, 256) + "'; check the path");
}

/// Refuses what is not a regular file: reading a FIFO blocks until a writer
/// comes, a device such as /dev/zero never ends.
void require_regular(const std::string& path, const struct stat& info) {
  const std::string kind = not_regular(info);
  if (kind.empty())
    return;
  if (S_ISDIR(info.st_mode))
    throw rule_file_problem(path, "is a directory; name the .toml file in it");
  throw rule_file_problem(path, "is " + kind +
                                    ", not a regular file; rule files are "
                                    "read whole: name a .toml file");
}

/// "larger than 32 MiB (<bytes>), the most a rule file may hold; ..."
std::string too_large(const std::string& bytes) {
  return "larger than " + std::to_string(max_rule_text_bytes >> 20) + " MiB (" +
         bytes +
         "), the most a rule file may hold; check that it is the rule file";
}

class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }

private:
  int fd_;
};

/// Where a check of a rule text failed: "<source>:<line>:<column>: ".
class TextPosition {
public:
  TextPosition(std::string_view text, const std::string& source)
      : text_(text), source_(source) {}

  [[noreturn]] void fail(std::size_t at, const std::string& problem) const {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) {
        ++column; // columns count characters, as toml++'s do
      }
    }
    throw std::invalid_argument(source_ + ":" + std::to_string(line) + ":" +
                                std::to_string(column) + ": " + problem);
  }

private:
  std::string_view text_;
  const std::string& source_;
};

std::string code_point_name(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t k) {
    return static_cast<unsigned char>(text[at + k]);
  };
  const std::size_t length = utf8_sequence_length(text, at);
  std::uint32_t value = 0;
  if (length == 2)
    value = (byte(0) & 0x1Fu) << 6 | (byte(1) & 0x3Fu);
  else if (length == 3)
    value =
        (byte(0) & 0x0Fu) << 12 | (byte(1) & 0x3Fu) << 6 | (byte(2) & 0x3Fu);
  else if (length == 4)
    value = (byte(0) & 0x07u) << 18 | (byte(1) & 0x3Fu) << 12 |
            (byte(2) & 0x3Fu) << 6 | (byte(3) & 0x3Fu);
  char name[16];
  std::snprintf(name, sizeof name, "U+%04X", static_cast<unsigned>(value));
  return name;
}

/// Scans a rule text the way a TOML parser tokenizes it, as far as strings,
/// comments, table headers, keys and brackets go, to refuse what toml++
/// must not see: non-ASCII characters outside comments and nesting deeper
/// than max_rule_nesting. Never recursive; anything else toml++ judges.
class RuleTextScanner {
public:
  RuleTextScanner(std::string_view text, const std::string& source)
      : text_(text), where_(text, source) {}

  void scan() {
    bool line_start = true;
    // A UTF-8 byte order mark: toml++ skips it.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF")
      pos_ = 3;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        if (open_.empty()) {
          line_start = true;
          statement_keys_ = 0;
          in_statement_key_ = false;
          update_depth();
        }
        ++pos_;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
        continue;
      }
      if (c == '#') {
        skip_comment();
        continue;
      }
      if (line_start && open_.empty()) {
        line_start = false;
        if (c == '[') {
          header();
          continue;
        }
        in_statement_key_ = true;
        statement_keys_ = 1;
        update_depth();
      }
      character(c);
    }
  }

private:
  void character(char c) {
    const bool in_key =
        in_statement_key_ || (!open_.empty() && open_.back().in_key);
    switch (c) {
    case '"':
    case '\'':
      skip_string();
      return;
    case '.':
      if (in_statement_key_)
        ++statement_keys_;
      else if (in_key)
        ++open_.back().keys;
      update_depth();
      break;
    case '=':
      if (in_statement_key_)
        in_statement_key_ = false;
      else if (in_key)
        open_.back().in_key = false;
      break;
    case '[':
    case '{':
      // An opening bracket where a key is expected is an error toml++
      // reports; counted all the same.
      open_.push_back({c == '{', 1, c == '{'});
      update_depth();
      break;
    case ',':
      if (!open_.empty() && open_.back().table) {
        open_.back().in_key = true;
        open_.back().keys = 1;
        update_depth();
      }
      break;
    case ']':
    case '}':
      if (!open_.empty()) {
        open_.pop_back();
        update_depth();
      }
      break;
    default:
      if (static_cast<unsigned char>(c) >= 0x80)
        non_ascii(pos_);
      break;
    }
    ++pos_;
  }

  /// A table header, [a.b] or [[a.b]]: its keys are levels of nesting
  /// (twice as many for an array of tables, whose elements are tables).
  void header() {
    ++pos_;
    const bool array = pos_ < text_.size() && text_[pos_] == '[';
    if (array)
      ++pos_;
    const int per_key = array ? 2 : 1;
    header_depth_ = per_key;
    statement_keys_ = 0;
    update_depth();
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n' || c == '#' || c == ']')
        return; // the rest of the line is scanned as usual
      if (c == '"' || c == '\'') {
        skip_string();
        continue;
      }
      if (c == '.') {
        header_depth_ += per_key;
        update_depth();
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        non_ascii(pos_);
      }
      ++pos_;
    }
  }

  void skip_comment() {
    while (pos_ < text_.size() && text_[pos_] != '\n')
      ++pos_;
  }

  /// A basic ("...", """...""") or literal ('...', '''...''') string. A
  /// single-line string ends at the end of its line, as toml++ stops there.
  void skip_string() {
    const char quote = text_[pos_];
    const bool multi_line = text_.substr(pos_, 3) == std::string(3, quote);
    pos_ += multi_line ? 3 : 1;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (static_cast<unsigned char>(c) >= 0x80)
        non_ascii(pos_);
      if (c == '\n' && !multi_line)
        return;
      if (c == '\\' && quote == '"') {
        // The escaped character, ASCII too (toml++ asks whether a character
        // after a backslash is whitespace). A backslash at the end of a
        // line continues only a multi-line string.
        if (pos_ + 1 < text_.size() &&
            static_cast<unsigned char>(text_[pos_ + 1]) >= 0x80)
          non_ascii(pos_ + 1);
        pos_ +=
            pos_ + 1 < text_.size() && (multi_line || text_[pos_ + 1] != '\n')
                ? 2
                : 1;
        continue;
      }
      if (c == quote &&
          (!multi_line || text_.substr(pos_, 3) == std::string(3, quote))) {
        // """"" ends a multi-line string with one or two quotes in it.
        std::size_t run = 0;
        while (multi_line && pos_ + run < text_.size() &&
               text_[pos_ + run] == quote && run < 5)
          ++run;
        pos_ += multi_line ? run : 1;
        return;
      }
      ++pos_;
    }
  }

  [[noreturn]] void non_ascii(std::size_t at) const {
    where_.fail(at, "character " + code_point_name(text_, at) +
                        " outside a comment; a rule file is ASCII outside "
                        "its comments: write the character of a phase name "
                        "as a \\uXXXX escape in a quoted key, e.g. "
                        "[phases.\"caf\\u00e9\"]");
  }

  void update_depth() {
    int depth = header_depth_ + statement_keys_;
    for (const Open& open : open_)
      depth += 1 + (open.table ? open.keys : 0);
    if (depth > max_rule_nesting)
      where_.fail(pos_, "nested more than " + std::to_string(max_rule_nesting) +
                            " levels deep (table keys, dotted keys, inline "
                            "tables and arrays together); a rule file needs "
                            "5: [phases.<name>] then allow.<kind> = { ... }");
  }

  struct Open {
    bool table;   // an inline table; else an array
    int keys = 1; // levels of the key being read (a.b.c: 3)
    bool in_key = true;
  };

  std::string_view text_;
  TextPosition where_;
  std::size_t pos_ = 0;
  int header_depth_ = 0;
  int statement_keys_ = 0;
  bool in_statement_key_ = false;
  std::vector<Open> open_; // at most max_rule_nesting deep
};

} // namespace

std::string read_rule_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw cannot_read(path);
  require_regular(path, info);
  if (static_cast<std::uint64_t>(info.st_size) > max_rule_text_bytes)
    throw rule_file_problem(
        path, "is " + too_large(std::to_string(info.st_size) + " bytes"));
  // Not blocking, should the path have become a FIFO since.
  FileDescriptor file(
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (file.get() < 0)
    throw cannot_read(path);
  if (::fstat(file.get(), &info) != 0)
    throw rule_file_problem(path, "could not be read to its end");
  require_regular(path, info);
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t count = ::read(file.get(), buffer, sizeof buffer);
    if (count < 0 && errno == EINTR)
      continue;
    if (count < 0)
      throw rule_file_problem(path, "could not be read to its end");
    if (count == 0)
      break;
    text.append(buffer, static_cast<std::size_t>(count));
    if (text.size() > max_rule_text_bytes) // it grows as it is read
      throw rule_file_problem(
          path,
          "is " + too_large(std::to_string(text.size()) + " bytes or more"));
  }
  return text;
}

void check_rule_text(std::string_view text, const std::string& source) {
  if (text.size() > max_rule_text_bytes)
    throw std::invalid_argument(
        source + ": the rule text is " +
        too_large(std::to_string(text.size()) + " bytes"));
  const TextPosition where(text, source);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X",
                    static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      where.fail(i, "not UTF-8 (byte " + std::string(byte) +
                        "); save the rule file as UTF-8 text");
    }
    i += length;
  }
  RuleTextScanner(text, source).scan();
}

} // namespace cunumpy::Impl
