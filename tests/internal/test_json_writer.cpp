// The report's JSON writer against nlohmann::json, whose dump it replaces:
// the same bytes for the same document, for random documents with every
// kind of value (strings with quotes, control characters, UTF-8 and invalid
// UTF-8; integers at their limits; doubles that are integral, tiny, huge,
// not finite), empty and nested containers.

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "report/json_writer.hpp"

namespace {

using cunumpy::Impl::JsonWriter;
using nlohmann::json;

void write(JsonWriter& writer, const json& value) {
  switch (value.type()) {
  case json::value_t::object:
    writer.begin_object();
    for (const auto& [name, member] : value.items()) {
      writer.key(name);
      write(writer, member);
    }
    writer.end_object();
    return;
  case json::value_t::array:
    writer.begin_array();
    for (const json& element : value)
      write(writer, element);
    writer.end_array();
    return;
  case json::value_t::string:
    writer.value(value.get_ref<const std::string&>());
    return;
  case json::value_t::boolean:
    writer.value(value.get<bool>());
    return;
  case json::value_t::number_integer:
    writer.value(value.get<std::int64_t>());
    return;
  case json::value_t::number_unsigned:
    writer.value(value.get<std::uint64_t>());
    return;
  case json::value_t::number_float:
    writer.value(value.get<double>());
    return;
  default:
    writer.value(nullptr);
  }
}

std::string written(const json& document) {
  JsonWriter writer;
  write(writer, document);
  return writer.take();
}

std::string dumped(const json& document) {
  return document.dump(2, ' ', false, json::error_handler_t::replace);
}

class Documents {
public:
  explicit Documents(unsigned seed) : random_(seed) {}

  std::string text() {
    static const std::vector<std::string> pieces = {
        "a",
        "phase",
        "\"",
        "\\",
        "\n",
        "\t",
        "\b",
        "\f",
        "\r",
        std::string(1, '\0'),
        "\x01",
        "\x1f",
        "\x7f",
        " ",
        "/",
        "\xc3\xa9",         // é
        "\xe2\x82\xac",     // €
        "\xf0\x9f\x98\x80", // an emoji
        "\xff",
        "\xc3",
        "\xe2\x82",
        "\xed\xa0\x80",
        "\xc0\xaf",
        "\x80"};
    std::string result;
    const int length = pick(0, 6);
    for (int i = 0; i < length; ++i)
      result += pieces[static_cast<std::size_t>(
          pick(0, static_cast<int>(pieces.size()) - 1))];
    return result;
  }

  double number() {
    static const double special[] = {0.0,
                                     -0.0,
                                     1.0,
                                     2.0,
                                     0.1,
                                     1e-5,
                                     1.5e-7,
                                     123456789.0,
                                     1e15,
                                     1e16,
                                     1e17,
                                     1e300,
                                     5e-324,
                                     std::numeric_limits<double>::max(),
                                     std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(),
                                     0.30000000000000004,
                                     1.0 / 3.0};
    if (pick(0, 1) == 0)
      return special[pick(0, static_cast<int>(std::size(special)) - 1)];
    std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
    return mantissa(random_) * std::pow(10.0, pick(-12, 12));
  }

  json value(int depth) {
    switch (pick(0, depth > 3 ? 6 : 8)) {
    case 0:
      return text();
    case 1:
      return pick(0, 1) == 1;
    case 2:
      return nullptr;
    case 3:
      return static_cast<std::int64_t>(
          pick(0, 1) ? std::numeric_limits<std::int64_t>::min()
                     : -static_cast<std::int64_t>(pick(0, 1000000)));
    case 4:
      return static_cast<std::uint64_t>(
          pick(0, 1) ? std::numeric_limits<std::uint64_t>::max()
                     : static_cast<std::uint64_t>(pick(0, 1000000)));
    case 5:
    case 6:
      return number();
    case 7: {
      json array = json::array();
      for (int i = pick(0, 4); i > 0; --i)
        array.push_back(value(depth + 1));
      return array;
    }
    default: {
      json object = json::object();
      for (int i = pick(0, 5); i > 0; --i)
        object[text()] = value(depth + 1);
      return object;
    }
    }
  }

private:
  int pick(int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random_);
  }
  std::mt19937_64 random_;
};

TEST(JsonWriter, WritesWhatNlohmannDumps) {
  Documents documents(20261201);
  for (int i = 0; i < 3000; ++i) {
    json document = json::object();
    for (int member = 0; member < 6; ++member)
      document[documents.text()] = documents.value(1);
    ASSERT_EQ(written(document), dumped(document)) << "document " << i;
  }
}

TEST(JsonWriter, EmptyAndNestedContainers) {
  for (const char* text :
       {"{}", "[]", "[[]]", "[{}]", R"({"a":{}})", R"({"a":[],"b":[[],{}]})",
        R"([1,[2,[3,{"x":[]}]]])", R"("top")", "7", "null"}) {
    const json document = json::parse(text);
    EXPECT_EQ(written(document), dumped(document)) << text;
  }
}

/// `value` written with the members of every object in a random order.
void write_shuffled(JsonWriter& writer, const json& value,
                    std::mt19937_64& random) {
  if (value.is_object()) {
    std::vector<std::pair<std::string, const json*>> members;
    for (const auto& [name, member] : value.items())
      members.emplace_back(name, &member);
    std::shuffle(members.begin(), members.end(), random);
    writer.begin_object();
    for (const auto& [name, member] : members) {
      writer.key(name);
      write_shuffled(writer, *member, random);
    }
    writer.end_object();
  } else if (value.is_array()) {
    writer.begin_array();
    for (const json& element : value)
      write_shuffled(writer, element, random);
    writer.end_array();
  } else {
    write(writer, value);
  }
}

TEST(JsonWriter, MembersInAnyOrderAreWrittenInOrder) {
  Documents documents(20261207);
  std::mt19937_64 random(7);
  for (int i = 0; i < 3000; ++i) {
    json document = json::object();
    for (int member = 0; member < 6; ++member)
      document[documents.text()] = documents.value(1);
    JsonWriter writer;
    write_shuffled(writer, document, random);
    ASSERT_EQ(writer.take(), dumped(document)) << "document " << i;
  }
}

TEST(JsonWriter, ANameTwiceIsRefused) {
  JsonWriter writer;
  writer.begin_object();
  writer.member("b", 1);
  EXPECT_THROW(writer.key("b"), std::logic_error);
  writer.member("a", 2);
  writer.member("b", 3);
  EXPECT_THROW(writer.end_object(), std::logic_error);
}

TEST(JsonWriter, UnbalancedDocumentsAreRefused) {
  JsonWriter open;
  open.begin_array();
  EXPECT_THROW(open.take(), std::logic_error);
  JsonWriter wrong;
  wrong.begin_array();
  EXPECT_THROW(wrong.end_object(), std::logic_error);
  JsonWriter keyless;
  keyless.begin_object();
  EXPECT_THROW(keyless.value(1), std::logic_error);
}

} // namespace
