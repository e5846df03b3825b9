#include "report/json_writer.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cunumpy::Impl {

namespace {

/// What a byte of a string needs: 0 nothing, 1 an escape (the quote, the
/// backslash and the control characters below 0x20, as nlohmann::json's
/// serializer escapes them; 0x7f is written as it is), 2 UTF-8 decoding.
constexpr std::array<unsigned char, 256> byte_classes = [] {
  std::array<unsigned char, 256> classes{};
  for (int c = 0; c < 0x20; ++c)
    classes[c] = 1;
  classes['"'] = 1;
  classes['\\'] = 1;
  for (int c = 0x80; c < 0x100; ++c)
    classes[c] = 2;
  return classes;
}();

} // namespace

void append_json_string(std::string& out, std::string_view text) {
  unsigned char found = 0;
  for (const char ch : text)
    found |= byte_classes[static_cast<unsigned char>(ch)];
  const bool ascii = (found & 2) == 0;
  const bool plain = found == 0;
  if (!ascii) {
    // UTF-8 (valid or not) as nlohmann writes it: the rules for invalid
    // sequences are its own, and names of more than ASCII are rare.
    out += nlohmann::json(std::string(text))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  if (plain) {
    out.append(text);
  } else {
    for (const char ch : text) {
      switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          static constexpr char hex[] = "0123456789abcdef";
          const auto c = static_cast<unsigned char>(ch);
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += ch;
        }
      }
    }
  }
  out += '"';
}

void JsonWriter::newline_and_indent(std::size_t depth) {
  static constexpr char spaces[] = "\n                                "
                                   "                                ";
  std::size_t width = depth * static_cast<std::size_t>(indent_);
  if (width < sizeof spaces - 1) {
    out_.append(spaces, width + 1);
    return;
  }
  out_ += '\n';
  out_.append(width, ' ');
}

void JsonWriter::element() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0)
    return;
  Level& level = top();
  if (level.object)
    throw std::logic_error("JsonWriter: a value in an object without a key");
  if (!level.empty)
    out_ += ',';
  level.empty = false;
  newline_and_indent(depth_);
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (depth_ == 0 || !top().object || after_key_)
    throw std::logic_error("JsonWriter: key '" + std::string(name) +
                           "' outside an object");
  Level& level = top();
  if (!level.empty) {
    const std::string_view last = level.keys[level.count - 1];
    if (last == name)
      throw std::logic_error("JsonWriter: key '" + std::string(name) +
                             "' written twice");
    level.ordered = level.ordered && last < name;
    out_ += ',';
  }
  level.empty = false;
  if (level.count == level.keys.size()) {
    level.keys.emplace_back();
    level.starts.emplace_back();
  }
  level.keys[level.count].assign(name);
  level.starts[level.count] = out_.size();
  ++level.count;
  newline_and_indent(depth_);
  append_json_string(out_, name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

void JsonWriter::open(bool object, char bracket) {
  element();
  out_ += bracket;
  if (depth_ == levels_.size())
    levels_.emplace_back();
  Level& level = levels_[depth_++];
  level.object = object;
  level.empty = true;
  level.ordered = true;
  level.count = 0;
}

void JsonWriter::sort_members(Level& level) {
  // Member i's text is out_[starts[i], end), its end the comma before the
  // next member, or the end of out_ for the last.
  std::vector<std::size_t> order(level.count);
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return level.keys[a] < level.keys[b];
  });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (level.keys[order[i - 1]] == level.keys[order[i]])
      throw std::logic_error("JsonWriter: key '" + level.keys[order[i]] +
                             "' written twice");
  const std::size_t begin = level.starts[0];
  const auto end_of = [&](std::size_t i) {
    return i + 1 < level.count ? level.starts[i + 1] - 1 : out_.size();
  };
  std::string sorted;
  sorted.reserve(out_.size() - begin);
  for (std::size_t i : order) {
    if (!sorted.empty())
      sorted += ',';
    sorted.append(out_, level.starts[i], end_of(i) - level.starts[i]);
  }
  out_.replace(begin, std::string::npos, sorted);
}

void JsonWriter::begin_object() {
  open(true, '{');
}
void JsonWriter::begin_array() {
  open(false, '[');
}

void JsonWriter::close(bool object, char bracket) {
  if (depth_ == 0 || top().object != object || after_key_)
    throw std::logic_error(std::string("JsonWriter: '") + bracket +
                           "' closes nothing open");
  const bool empty = top().empty;
  if (object && !top().ordered)
    sort_members(top());
  --depth_;
  if (!empty)
    newline_and_indent(depth_);
  out_ += bracket;
}

void JsonWriter::end_object() {
  close(true, '}');
}
void JsonWriter::end_array() {
  close(false, ']');
}

void JsonWriter::value(std::string_view text) {
  element();
  append_json_string(out_, text);
}

void JsonWriter::value(bool flag) {
  element();
  out_ += flag ? "true" : "false";
}

void JsonWriter::value(std::nullptr_t) {
  element();
  out_ += "null";
}

void JsonWriter::value(double number) {
  element();
  if (!std::isfinite(number)) {
    out_ += "null"; // what nlohmann writes for NaN and infinities
    return;
  }
  // nlohmann's own digits and layout ("2.0", "1e-05"): the function its
  // serializer calls (the test of this file checks it against dump()).
  char digits[64];
  char* end =
      nlohmann::detail::to_chars(digits, digits + sizeof digits, number);
  out_.append(digits, static_cast<std::size_t>(end - digits));
}

void JsonWriter::value(const std::vector<std::string>& texts) {
  begin_array();
  for (const std::string& text : texts)
    value(text);
  end_array();
}

void JsonWriter::signed_value(std::int64_t number) {
  element();
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  out_.append(digits, end);
}

void JsonWriter::unsigned_value(std::uint64_t number) {
  element();
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  out_.append(digits, end);
}

std::string JsonWriter::take() {
  if (depth_ != 0 || after_key_)
    throw std::logic_error("JsonWriter: the document is not closed");
  return std::move(out_);
}

} // namespace cunumpy::Impl
