#ifndef CUNUMPY_SRC_REPORT_JSON_WRITER_HPP
#define CUNUMPY_SRC_REPORT_JSON_WRITER_HPP

// A JSON document written as it is walked, without building a tree: the
// plugin's report at the end of every process (a tree of a few thousand
// values, built, copied and serialized, was most of what the plugin cost
// at the end of a run).
//
// The text is byte for byte what nlohmann::json's
// dump(indent, ' ', false, error_handler_t::replace) writes for the same
// document: 2-space pretty printing, members in ascending byte order of
// their names (what nlohmann's std::map gives; members written out of
// order are a logic_error, so a misplaced key fails every test that writes
// a report instead of changing the file), numbers as nlohmann writes them,
// invalid UTF-8 replaced by U+FFFD.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cunumpy::Impl {

class JsonWriter {
public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {
    // The plugin's report in one allocation, usually. (The test
    // plugin.report_that_cannot_be_made makes this one, of 65537 bytes,
    // fail: change both together.)
    out_.reserve(64 * 1024);
  }

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();

  /// The name of the next member of the current object; names must come
  /// in ascending byte order (std::logic_error otherwise).
  JsonWriter& key(std::string_view name);

  void value(std::string_view text);
  void value(const std::string& text) { value(std::string_view(text)); }
  void value(const char* text) { value(std::string_view(text)); }
  void value(bool flag);
  void value(double number);
  void value(std::nullptr_t);
  template <class Integer, std::enable_if_t<std::is_integral_v<Integer> &&
                                                !std::is_same_v<Integer, bool>,
                                            int> = 0>
  void value(Integer number) {
    if constexpr (std::is_signed_v<Integer>)
      signed_value(static_cast<std::int64_t>(number));
    else
      unsigned_value(static_cast<std::uint64_t>(number));
  }
  /// The value, or null.
  template <class Value> void value(const std::optional<Value>& maybe) {
    if (maybe)
      value(*maybe);
    else
      value(nullptr);
  }
  void value(const std::vector<std::string>& texts);

  template <class Value> void member(std::string_view name, const Value& v) {
    key(name);
    value(v);
  }

  /// The document; every object and array must be closed.
  std::string take();

private:
  struct Level {
    bool object = false;
    bool empty = true;
    std::string last_key;
  };
  /// Before a value: the separator, new line and indentation of an array
  /// element (nothing after a member's name).
  void element();
  void open(bool object, char bracket);
  void close(bool object, char bracket);
  void signed_value(std::int64_t number);
  void unsigned_value(std::uint64_t number);
  void newline_and_indent(std::size_t depth);

  Level& top() { return levels_[depth_ - 1]; }

  int indent_;
  std::string out_;
  /// The open containers are levels_[0, depth_): the levels above stay,
  /// so that their key buffers are not allocated again for every object.
  std::vector<Level> levels_;
  std::size_t depth_ = 0;
  bool after_key_ = false;
};

/// `text` as a JSON string, quotes included, as nlohmann::json writes it
/// (invalid UTF-8 replaced).
void append_json_string(std::string& out, std::string_view text);

} // namespace cunumpy::Impl

#endif
