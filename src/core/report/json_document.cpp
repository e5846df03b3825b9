#include "report/json_document.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace cunumpy::Impl {
namespace {

using Type = JsonDocument::Type;

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int hex(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

/// Bytes a string may hold as they are: ASCII but '"', '\\' and control
/// characters.
struct PlainBytes {
  bool table[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x80; ++c)
      table[c] = c != '"' && c != '\\';
  }
  constexpr bool operator[](unsigned char c) const { return table[c]; }
};
constexpr PlainBytes plain;

class Parser {
public:
  Parser(std::string_view text, std::vector<JsonDocument::Node>& nodes,
         std::size_t max_depth)
      : text_(text), nodes_(nodes), max_depth_(max_depth) {}

  void parse() {
    if (text_.size() >= 0xffffffffu)
      fail(0, "text of 4 GiB or more");
    skip_space();
    value(0);
    skip_space();
    if (at_ != text_.size())
      fail(at_, "text after the value");
  }

private:
  [[noreturn]] void fail(std::size_t where, const std::string& what) {
    throw JsonSyntaxError(where, what + " at byte " + std::to_string(where),
                          false);
  }
  void skip_space() {
    while (at_ < text_.size() && is_space(text_[at_]))
      ++at_;
  }
  std::uint32_t add(Type type, std::size_t offset) {
    JsonDocument::Node node;
    node.type = type;
    node.offset = static_cast<std::uint32_t>(offset);
    nodes_.push_back(node);
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }

  // Containers are parsed with an explicit stack: no recursion, whatever
  // the depth (which max_depth bounds).
  void value(std::size_t depth) {
    struct Open {
      std::uint32_t node;
      bool object;
    };
    std::vector<Open> stack;
    while (true) {
      if (at_ >= text_.size())
        fail(at_, "unexpected end");
      const char c = text_[at_];
      if (c == '{' || c == '[') {
        if (depth + stack.size() >= max_depth_)
          throw JsonSyntaxError(at_, "nested too deep", true);
        const bool object = c == '{';
        const std::uint32_t node =
            add(object ? Type::object : Type::array, at_);
        ++at_;
        skip_space();
        if (at_ < text_.size() && text_[at_] == (object ? '}' : ']')) {
          ++at_;
          nodes_[node].end = static_cast<std::uint32_t>(nodes_.size());
          nodes_[node].length =
              static_cast<std::uint32_t>(at_ - nodes_[node].offset);
        } else {
          stack.push_back({node, object});
          if (object)
            member_name();
          continue;
        }
      } else {
        scalar();
      }
      // After a value: the next element, or the end of containers.
      while (true) {
        if (stack.empty())
          return;
        Open& open = stack.back();
        ++nodes_[open.node].count;
        skip_space();
        if (at_ >= text_.size())
          fail(at_, "unexpected end");
        if (text_[at_] == ',') {
          ++at_;
          skip_space();
          if (open.object)
            member_name();
          break;
        }
        if (text_[at_] != (open.object ? '}' : ']'))
          fail(at_,
               open.object ? "expected ',' or '}'" : "expected ',' or ']'");
        ++at_;
        nodes_[open.node].end = static_cast<std::uint32_t>(nodes_.size());
        nodes_[open.node].length =
            static_cast<std::uint32_t>(at_ - nodes_[open.node].offset);
        stack.pop_back();
      }
    }
  }

  void member_name() {
    if (at_ >= text_.size() || text_[at_] != '"')
      fail(at_, "expected a member name");
    string();
    skip_space();
    if (at_ >= text_.size() || text_[at_] != ':')
      fail(at_, "expected ':'");
    ++at_;
    skip_space();
  }

  void scalar() {
    const char c = text_[at_];
    if (c == '"')
      return string();
    if (c == '-' || (c >= '0' && c <= '9'))
      return number();
    struct Literal {
      std::string_view word;
      Type type;
      bool flag;
    };
    static constexpr Literal literals[] = {{"true", Type::boolean, true},
                                           {"false", Type::boolean, false},
                                           {"null", Type::null, false}};
    for (const auto& [word, type, flag] : literals)
      if (text_.substr(at_, word.size()) == word) {
        const std::uint32_t node = add(type, at_);
        nodes_[node].flag = flag;
        nodes_[node].length = static_cast<std::uint32_t>(word.size());
        nodes_[node].end = node + 1;
        at_ += word.size();
        return;
      }
    fail(at_, "invalid literal");
  }

  void string() {
    const std::size_t start = ++at_;
    bool escapes = false;
    while (true) {
      if (at_ >= text_.size())
        fail(start - 1, "unterminated string");
      // Plain ASCII quickly.
      while (at_ < text_.size() &&
             plain[static_cast<unsigned char>(text_[at_])])
        ++at_;
      if (at_ >= text_.size())
        fail(start - 1, "unterminated string");
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"')
        break;
      if (c < 0x20)
        fail(at_, "control character in a string");
      if (c == '\\') {
        escapes = true;
        if (at_ + 1 >= text_.size())
          fail(at_, "unterminated string");
        const char e = text_[at_ + 1];
        if (e == 'u') {
          for (std::size_t k = 2; k < 6; ++k)
            if (at_ + k >= text_.size() || hex(text_[at_ + k]) < 0)
              fail(at_, "bad \\u escape");
          at_ += 6;
          continue;
        }
        if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' &&
            e != 'n' && e != 'r' && e != 't')
          fail(at_, "bad escape");
        at_ += 2;
        continue;
      }
      if (c < 0x80) {
        ++at_;
        continue;
      }
      // UTF-8: a lead byte and its continuation bytes, no overlong form.
      const std::size_t length = (c >> 5) == 6    ? 2
                                 : (c >> 4) == 14 ? 3
                                 : (c >> 3) == 30 ? 4
                                                  : 0;
      if (length == 0 || c < 0xC2 || c > 0xF4 || at_ + length > text_.size())
        fail(at_, "ill-formed UTF-8");
      for (std::size_t k = 1; k < length; ++k)
        if ((static_cast<unsigned char>(text_[at_ + k]) & 0xC0) != 0x80)
          fail(at_, "ill-formed UTF-8");
      at_ += length;
    }
    const std::uint32_t node = add(Type::string, start);
    nodes_[node].flag = escapes;
    nodes_[node].length = static_cast<std::uint32_t>(at_ - start);
    nodes_[node].end = node + 1;
    ++at_;
  }

  void number() {
    const std::size_t start = at_;
    bool integer = true;
    if (text_[at_] == '-')
      ++at_;
    const auto digits = [&] {
      const std::size_t first = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9')
        ++at_;
      return at_ - first;
    };
    if (at_ < text_.size() && text_[at_] == '0')
      ++at_;
    else if (digits() == 0)
      fail(at_, "invalid number");
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      integer = false;
      if (digits() == 0)
        fail(at_, "invalid number");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      integer = false;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-'))
        ++at_;
      if (digits() == 0)
        fail(at_, "invalid number");
    }
    const std::uint32_t node = add(Type::number, start);
    nodes_[node].flag = integer;
    nodes_[node].length = static_cast<std::uint32_t>(at_ - start);
    nodes_[node].end = node + 1;
  }

  std::string_view text_;
  std::vector<JsonDocument::Node>& nodes_;
  std::size_t max_depth_;
  std::size_t at_ = 0;
};

} // namespace

JsonDocument::JsonDocument(std::string_view text, std::size_t max_depth)
    : text_(text) {
  nodes_.reserve(text.size() / 12 + 16);
  Parser(text, nodes_, max_depth).parse();
}

JsonValue JsonDocument::root() const {
  return JsonValue(*this, 0);
}

std::string_view JsonValue::text() const {
  const auto& n = node();
  if (n.type == Type::string)
    return document_->text_.substr(n.offset - 1, n.length + 2);
  return document_->text_.substr(n.offset, n.length);
}

std::string JsonValue::string() const {
  const auto& n = node();
  const std::string_view raw = document_->text_.substr(n.offset, n.length);
  if (!n.flag)
    return std::string(raw);
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out += raw[i];
      continue;
    }
    const char e = raw[++i];
    switch (e) {
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'u': {
      std::uint32_t code = 0;
      for (std::size_t k = 1; k <= 4; ++k)
        code = code * 16 + static_cast<std::uint32_t>(hex(raw[i + k]));
      i += 4;
      // A surrogate pair is one code point; a lone surrogate is U+FFFD.
      if (code >= 0xD800 && code < 0xDC00 && i + 6 < raw.size() + 1 &&
          raw.substr(i + 1, 2) == "\\u") {
        std::uint32_t low = 0;
        for (std::size_t k = 3; k <= 6; ++k)
          low = low * 16 + static_cast<std::uint32_t>(hex(raw[i + k]));
        if (low >= 0xDC00 && low < 0xE000) {
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
      }
      if (code >= 0xD800 && code < 0xE000)
        code = 0xFFFD;
      append_utf8(out, code);
      break;
    }
    default:
      out += e; // '"', '\\', '/'
    }
  }
  return out;
}

std::optional<std::uint64_t> JsonValue::unsigned_integer() const {
  const auto& n = node();
  if (n.type != Type::number || !n.flag)
    return std::nullopt;
  const std::string_view raw = text();
  std::uint64_t value = 0;
  const auto [end, error] =
      std::from_chars(raw.data(), raw.data() + raw.size(), value);
  if (error != std::errc() || end != raw.data() + raw.size())
    return std::nullopt; // negative, or beyond 2^64
  return value;
}

double JsonValue::number() const {
  const std::string_view raw = text();
  const std::string copy(raw); // strtod wants a terminated string
  return std::strtod(copy.c_str(), nullptr);
}

std::uint32_t JsonValue::child(std::size_t index) const {
  std::uint32_t at = index_ + 1;
  const bool object = type() == Type::object;
  for (std::size_t i = 0; i < index; ++i) {
    if (object)
      ++at; // the member's name
    at = document_->nodes_[at].end;
  }
  return at;
}

std::vector<JsonValue> JsonValue::elements() const {
  std::vector<JsonValue> result;
  result.reserve(size());
  std::uint32_t at = index_ + 1;
  const bool object = type() == Type::object;
  for (std::size_t i = 0; i < size(); ++i) {
    if (object)
      ++at;
    result.emplace_back(*document_, at);
    at = document_->nodes_[at].end;
  }
  return result;
}

JsonValue JsonValue::at(std::size_t index) const {
  std::uint32_t at = child(index);
  if (type() == Type::object)
    ++at;
  return JsonValue(*document_, at);
}

std::string JsonValue::key(std::size_t index) const {
  return JsonValue(*document_, child(index)).string();
}

std::optional<JsonValue> JsonValue::find(std::string_view name,
                                         std::uint32_t* hint) const {
  if (type() != Type::object)
    return std::nullopt;
  const auto& nodes = document_->nodes_;
  const std::uint32_t first = index_ + 1, end = node().end;
  std::uint32_t at =
      hint != nullptr && *hint > index_ && *hint < end ? *hint : first;
  for (std::size_t i = 0; i < node().count; ++i) {
    if (at >= end)
      at = first;
    const auto& key = nodes[at];
    const bool same =
        key.flag
            ? JsonValue(*document_, at).string() == name
            : key.length == name.size() &&
                  document_->text_.compare(key.offset, key.length, name) == 0;
    const std::uint32_t next = nodes[at + 1].end;
    if (same) {
      if (hint != nullptr)
        *hint = next;
      return JsonValue(*document_, at + 1);
    }
    at = next;
  }
  return std::nullopt;
}

} // namespace cunumpy::Impl
