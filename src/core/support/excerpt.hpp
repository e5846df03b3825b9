#ifndef CUNUMPY_SRC_EXCERPT_HPP
#define CUNUMPY_SRC_EXCERPT_HPP

#include <cstddef>
#include <string>
#include <string_view>

namespace cunumpy::Impl {

/// The length of the well-formed UTF-8 sequence that starts at `text[i]`
/// (1 to 4), or 0 when the bytes there are not UTF-8: a stray continuation
/// byte, a truncated sequence, an overlong form, a surrogate or a code point
/// above U+10FFFF (the table of well-formed sequences of the Unicode
/// standard, section 3.9).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  const unsigned lead = byte(0);
  if (lead < 0x80)
    return 1;
  const auto continuation = [&](std::size_t k, unsigned low = 0x80,
                                unsigned high = 0xBF) {
    return byte(k) >= low && byte(k) <= high;
  };
  if (lead >= 0xC2 && lead <= 0xDF)
    return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = lead == 0xED ? 0x9F : 0xBF; // no surrogates
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned high = lead == 0xF4 ? 0x8F : 0xBF; // up to U+10FFFF
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4
                                                                            : 0;
  }
  return 0;
}

/// `text` as a line of a report or a message may show it: control
/// characters (a newline in a region name would start a line of its own)
/// and bytes that are not UTF-8 show as \xNN.
inline std::string printable(std::string_view text) {
  static const char digits[] = "0123456789abcdef";
  std::string result;
  result.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0 || byte < 0x20 || byte == 0x7F) {
      result += "\\x";
      result += digits[byte >> 4];
      result += digits[byte & 15];
      ++i;
    } else {
      result.append(text.substr(i, length));
      i += length;
    }
  }
  return result;
}

/// `text` for an error message: itself when at most `limit` bytes long, else
/// its beginning and its end around "...[N bytes]...", cut between
/// characters, so that a message never carries a whole 50 MB value. Control
/// characters and bytes that are not UTF-8 show as \xNN (printable).
inline std::string excerpt(std::string_view text, std::size_t limit = 64) {
  const auto escaped = [](std::string_view part) { return printable(part); };
  if (text.size() <= limit)
    return escaped(text);
  const auto is_continuation = [&](std::size_t i) {
    return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  std::size_t head = limit / 2;
  for (int step = 0; step < 3 && head > 0 && is_continuation(head); ++step)
    --head;
  std::size_t tail = text.size() - limit / 2;
  for (int step = 0; step < 3 && tail < text.size() && is_continuation(tail);
       ++step)
    ++tail;
  return escaped(text.substr(0, head)) + "...[" + std::to_string(tail - head) +
         " bytes]..." + escaped(text.substr(tail));
}

} // namespace cunumpy::Impl

#endif
