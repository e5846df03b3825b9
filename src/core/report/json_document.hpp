#ifndef CUNUMPY_SRC_REPORT_JSON_DOCUMENT_HPP
#define CUNUMPY_SRC_REPORT_JSON_DOCUMENT_HPP

// JSON text checked in one pass into a flat array of nodes that point into
// the text; numbers and strings are converted only when read. cunumpy-report
// reads 100,000 rank reports of tens of KiB in seconds this way (a tree of
// nlohmann::json values costs five times as much, most of it for numbers
// the merge never reads).

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cunumpy::Impl {

/// Text that is not JSON: where (a byte offset) and what.
struct JsonSyntaxError : std::runtime_error {
  JsonSyntaxError(std::size_t where, const std::string& what, bool too_deep)
      : std::runtime_error(what), byte(where), nested(too_deep) {}
  std::size_t byte;
  bool nested; ///< nested deeper than allowed
};

class JsonValue;

class JsonDocument {
public:
  enum class Type : std::uint8_t {
    null,
    boolean,
    number,
    string,
    array,
    object
  };
  struct Node {
    Type type = Type::null;
    bool flag = false;       ///< true; a number without fraction or exponent; a
                             ///< string with escapes
    std::uint32_t count = 0; ///< members or elements
    std::uint32_t end = 0;   ///< the node after this one's subtree
    std::uint32_t offset = 0; ///< its text (a string's without quotes)
    std::uint32_t length = 0;
  };

  /// Checks `text` (RFC 8259, valid UTF-8, at most `max_depth` levels);
  /// throws JsonSyntaxError. The text must outlive the document.
  JsonDocument(std::string_view text, std::size_t max_depth);
  JsonValue root() const;

private:
  friend class JsonValue;
  std::string_view text_;
  std::vector<Node> nodes_;
};

/// A value of a JsonDocument.
class JsonValue {
public:
  using Type = JsonDocument::Type;
  JsonValue(const JsonDocument& document, std::uint32_t index)
      : document_(&document), index_(index) {}

  Type type() const { return node().type; }
  bool is_null() const { return type() == Type::null; }
  bool is_boolean() const { return type() == Type::boolean; }
  bool is_string() const { return type() == Type::string; }
  bool is_number() const { return type() == Type::number; }
  bool is_object() const { return type() == Type::object; }
  bool is_array() const { return type() == Type::array; }

  bool boolean() const { return node().flag; }
  /// The string's value, its escapes decoded.
  std::string string() const;
  /// A whole number from 0 to 2^64 - 1, or nothing.
  std::optional<std::uint64_t> unsigned_integer() const;
  /// Any number as a double (infinite when beyond a double's range).
  double number() const;
  /// The value's text as written ("-1", "\"yes\"", "true").
  std::string_view text() const;

  /// Members (objects) or elements (arrays).
  std::size_t size() const { return node().count; }
  /// The member named `name`, or nothing. `hint`, when given, is where
  /// the search starts, and is left after the member found: members read
  /// in the order they were written are found at once.
  std::optional<JsonValue> find(std::string_view name,
                                std::uint32_t* hint = nullptr) const;
  /// The elements of an array, or the values of an object's members.
  std::vector<JsonValue> elements() const;
  /// Element `index` of an array, or member value `index` of an object.
  JsonValue at(std::size_t index) const;
  /// The name of member `index` of an object.
  std::string key(std::size_t index) const;

private:
  const JsonDocument::Node& node() const { return document_->nodes_[index_]; }
  /// The node of element `index` (of a member: its name's node).
  std::uint32_t child(std::size_t index) const;
  const JsonDocument* document_;
  std::uint32_t index_;
};

} // namespace cunumpy::Impl

#endif
