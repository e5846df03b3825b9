#ifndef CUNUMPY_SRC_RULE_FILE_INPUT_HPP
#define CUNUMPY_SRC_RULE_FILE_INPUT_HPP

// What a rule file must be before toml++ reads it. toml++ recurses once per
// level of nesting (and overflows the stack on a header of 50,000 dotted
// keys), Debian's toml++ 3.3.0 reaches undefined behaviour on some
// non-ASCII characters outside comments, and a FIFO or /dev/zero given as
// the rule file would block or read forever: all refused here, with one
// error naming the file, the line and the column.

#include <cstddef>
#include <string>
#include <string_view>

namespace cunumpy::Impl {

/// The largest rule file (or rule text given to require_toml): 32 MiB, about
/// 200,000 phases with a rule of a few lines each.
inline constexpr std::size_t max_rule_text_bytes = std::size_t(32) << 20;

/// The deepest nesting of a rule text: table header keys, dotted keys,
/// inline tables and arrays together (a rule file needs 5:
/// [phases.<name>] then allow.<kind> = { max_nbytes = 8 }).
inline constexpr int max_rule_nesting = 32;

/// The text of the rule file `path`. Refuses, before reading anything, a
/// path that is not a regular file (a directory, a FIFO, a device such as
/// /dev/zero) or a file larger than max_rule_text_bytes. Throws
/// std::invalid_argument "cunumpy::TransferBudget: rule file '<path>' ...".
std::string read_rule_file(const std::string& path);

/// Checks `text` before toml++ parses it: at most max_rule_text_bytes,
/// UTF-8, ASCII outside comments (a phase name's other characters are
/// written as \uXXXX escapes in a quoted key), nested at most
/// max_rule_nesting deep. Throws std::invalid_argument
/// "<source>:<line>:<column>: ..." otherwise.
void check_rule_text(std::string_view text, const std::string& source);

} // namespace cunumpy::Impl

#endif
