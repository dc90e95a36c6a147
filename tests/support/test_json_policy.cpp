// The one JSON reading policy (support/JsonParse.h) and the bounded echo (support/JsonEcho.h):
// the nesting and size limits hold exactly at their edges, a document nested 150,000 levels
// deep is refused without recursing, and an echo never writes more than its budget, whatever
// the value (issue 39, defect 2).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "support/Error.h"
#include "support/Json.h"

using namespace tessel;
using nlohmann::json;

namespace {

/// `depth` arrays, one inside the other, around `inner`.
std::string nestedArrays(size_t depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// A value nested `depth` levels, built without recursion.
json deepValue(size_t depth) {
  json value = json::array();
  for (size_t i = 1; i < depth; ++i) {
    json outer = json::array();
    outer.push_back(std::move(value));
    value = std::move(outer);
  }
  return value;
}

double secondsOf(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST(JsonPolicy, NestingUpToTheLimitIsAccepted) {
  json value = parseJson(nestedArrays(kMaxJsonDepth, "7"), "doc");
  for (size_t level = 1; level < kMaxJsonDepth; ++level) value = value.at(0);
  EXPECT_EQ(value, json::array({7}));
  // Objects count as arrays do, and both together.
  std::string objects;
  for (size_t i = 0; i < kMaxJsonDepth / 2; ++i) objects += "{\"k\":[";
  objects += "1";
  for (size_t i = 0; i < kMaxJsonDepth / 2; ++i) objects += "]}";
  EXPECT_NO_THROW(parseJson(objects, "doc"));
  EXPECT_TRUE(tryParseJson(objects).has_value());
}

TEST(JsonPolicy, OneLevelPastTheLimitIsRefusedNamingTheSource) {
  EXPECT_EQ(errorOf([] { parseJson(nestedArrays(kMaxJsonDepth + 1), "log.txt line 3"); }),
            "log.txt line 3: JSON nested deeper than 256 levels");
  EXPECT_EQ(errorOf([] { parseJson("{\"version\":" + nestedArrays(kMaxJsonDepth) + "}", ""); }),
            "JSON nested deeper than 256 levels");
  EXPECT_FALSE(tryParseJson(nestedArrays(kMaxJsonDepth + 1)).has_value());
  // A caller's own limit.
  EXPECT_EQ(errorOf([] { parseJson("[[[1]]]", "x", {.maxDepth = 2}); }), "x: JSON nested deeper than 2 levels");
  EXPECT_NO_THROW(parseJson("[[1]]", "x", {.maxDepth = 2}));
}

TEST(JsonPolicy, BracketsInsideStringsDoNotCount) {
  // The depth is the parser's own: brackets in strings, escaped quotes included, are text.
  std::string text = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  json value = parseJson(text, "doc");
  EXPECT_EQ(value.at(0).get<std::string>().size(), 2001u);
}

TEST(JsonPolicy, AHostileDocumentOf150000LevelsIsRefusedAtOnce) {
  // The probe's line: 300 KB, {"version":[[[...]]]}. Stack overflow came from ~65k levels.
  std::string line = "{\"version\":" + nestedArrays(150000) + "}";
  std::string error;
  double seconds = secondsOf([&] { error = errorOf([&] { parseJson(line, "records.log line 1"); }); });
  EXPECT_EQ(error, "records.log line 1: JSON nested deeper than 256 levels");
  EXPECT_LT(seconds, 1.0);
  EXPECT_FALSE(tryParseJson(line).has_value());
  // Unclosed, as a torn line would be.
  EXPECT_NE(errorOf([&] { parseJson(std::string(150000, '['), "torn"); }).find("nested deeper than 256 levels"),
            std::string::npos);
}

TEST(JsonPolicy, SyntaxErrorsStillNameTheSource) {
  EXPECT_EQ(errorOf([] { parseJson("{\"a\":1e999}", "f.json"); }).rfind("f.json: not valid JSON: ", 0), 0u);
  EXPECT_FALSE(tryParseJson("{\"a\":").has_value());
  EXPECT_FALSE(tryParseJson("[1] [2]").has_value());
  EXPECT_FALSE(tryParseJson("").has_value());
  EXPECT_EQ(tryParseJson(" {\"a\": [1, 2]} ").value(), json({{"a", {1, 2}}}));
}

TEST(JsonPolicy, TextOverTheSizeLimitIsRefusedBeforeParsing) {
  EXPECT_EQ(errorOf([] { parseJson("[1,2,3,4,5]", "msg", {.maxBytes = 10}); }),
            "msg: 11 bytes of JSON, more than this reader accepts (10)");
  EXPECT_NO_THROW(parseJson("[1,2,3,45]", "msg", {.maxBytes = 10}));
  EXPECT_FALSE(tryParseJson("[1,2,3,4,5]", {.maxBytes = 10}).has_value());
}

TEST(JsonEcho, ShortValuesAreWrittenWhole) {
  EXPECT_EQ(jsonEcho(json::parse(R"({"a":[1,-2,2.5,"x\"y"],"b":null,"c":true})")), R"({"a":[1,-2,2.5,"x\"y"],"b":null,"c":true})");
  EXPECT_EQ(jsonEcho(json(1e23)), "1e+23");
  EXPECT_EQ(jsonEcho(json(8.5)), "8.5");
  EXPECT_EQ(jsonEcho(json(2.0)), "2.0");  // still a float, as written
  EXPECT_EQ(jsonEcho(json(18446744073709551615u)), "18446744073709551615");
  EXPECT_EQ(jsonEcho(json::array()), "[]");
  EXPECT_EQ(jsonEcho(json::object()), "{}");
}

TEST(JsonEcho, LongValuesAreCutToEightyCharacters) {
  json numbers = json::array();
  for (int i = 0; i < 100; ++i) numbers.push_back(i);
  std::string whole = numbers.dump();
  EXPECT_EQ(jsonEcho(numbers), whole.substr(0, 77) + "...");
  std::string text(200, 'a');
  EXPECT_EQ(jsonEcho(json(text)), "\"" + text.substr(0, 76) + "...");
}

TEST(JsonEcho, AHugeOrDeepValueCostsNoMoreThanItsPrefix) {
  json big = json::array();
  for (int i = 0; i < 2000000; ++i) big.push_back(i);
  std::string echoed;
  EXPECT_LT(secondsOf([&] { echoed = jsonEcho(big); }), 0.05);
  EXPECT_EQ(echoed.size(), kJsonEchoChars);
  std::string huge(size_t(64) << 20, 'x');
  EXPECT_LT(secondsOf([&] { echoed = jsonEcho(json(std::move(huge))); }), 0.5);
  EXPECT_EQ(echoed.size(), kJsonEchoChars);
  // Far deeper than any stack: nlohmann's dump recursed once per level and crashed.
  json deep = deepValue(300000);
  EXPECT_EQ(jsonEcho(deep), std::string(77, '[') + "...");
  EXPECT_EQ(jsonEcho(deepValue(3)), "[[[]]]");
}
