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
// their names (what nlohmann's std::map gives: members written in another
// order are put in order when their object closes, a name twice is a
// logic_error), numbers as nlohmann writes them, invalid UTF-8 replaced by
// U+FFFD.

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

  /// The name of the next member of the current object, in any order (the
  /// same name twice in an object is a std::logic_error).
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
    /// Members came in ascending order so far: nothing to do at the close.
    bool ordered = true;
    /// The object's member names so far, and where each member's text
    /// starts in out_ (after the comma before it): the buffers stay with
    /// the level, reused by the next object at that depth.
    std::vector<std::string> keys;
    std::vector<std::size_t> starts;
    std::size_t count = 0;
  };
  /// Puts the members of the object at the top in order of their names.
  void sort_members(Level& level);
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
