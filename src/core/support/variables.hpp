#ifndef CUNUMPY_SRC_SUPPORT_VARIABLES_HPP
#define CUNUMPY_SRC_SUPPORT_VARIABLES_HPP

// Every environment variable cunumpy reads, described once: its name, what
// it takes, its default and one line of help. The table drives how each is
// read (ranges and choices live here only), the plugin's --help, and the
// table of docs/plugin.md (a test compares them).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cunumpy::Impl {

struct Variable {
  enum class Kind { text, integer, choice };
  std::string_view name;
  Kind kind = Kind::text;
  /// What it takes, as the docs say it: "0 to 64", "warn, exit", "a file".
  /// For a choice, the choices, comma-separated.
  std::string_view values;
  std::string_view fallback; ///< when unset, as the docs say it
  std::string_view help;     ///< one line
  bool plugin_only = false;  ///< else the library and the Python module too
  int minimum = 0;           ///< integers only
  int maximum = 0;
};

/// The table, in the order of the docs.
const std::vector<Variable>& variables();
/// The entry of `name` (a name cunumpy reads; std::logic_error otherwise).
const Variable& variable(std::string_view name);

/// A text variable's value; nothing when unset or empty.
std::optional<std::string> read_text(std::string_view name);
/// An integer variable's value in its range; its default when unset, and
/// when bad after one line on stderr naming the variable, the range and
/// the value used.
int read_integer(std::string_view name);
/// A choice variable's value (lowercase); its default when unset, and when
/// none of its choices after one line on stderr.
std::string read_choice(std::string_view name);

/// "  CUNUMPY_REPORT=a file  the report ... (default: ...)", one line each:
/// the plugin's --help.
std::string variables_help();
/// The table of docs/plugin.md, in Markdown.
std::string variables_markdown();

} // namespace cunumpy::Impl

#endif
