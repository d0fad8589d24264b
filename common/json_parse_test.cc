#include "common/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace det {
namespace {

std::string Nested(int depth, char open, char close) {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(ParseJsonBoundedTest, AcceptsDocumentsUpToTheLimit) {
  auto ok = ParseJsonBounded(Nested(kMaxJsonDepth, '[', ']'), "body");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  auto obj = ParseJsonBounded(R"({"a": {"b": [1, {"c": null}]}, "s": "[[[[{{{{"})", "body");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ((*obj)["s"], "[[[[{{{{");  // brackets inside strings are text
  EXPECT_EQ(*ParseJsonBounded("7", "body"), 7);
}

TEST(ParseJsonBoundedTest, RefusesOneLevelTooDeepNamingTheLimit) {
  auto deep = ParseJsonBounded(Nested(kMaxJsonDepth + 1, '[', ']'), "request body");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(deep.status().message(), "request body nesting exceeds 256 levels");
  std::string objects;
  for (int i = 0; i <= kMaxJsonDepth; ++i) objects += "{\"a\":";
  EXPECT_FALSE(ParseJsonBounded(objects + "1" + std::string(kMaxJsonDepth + 1, '}'), "b").ok());
  EXPECT_FALSE(ParseJsonBounded("[]", "b", /*max_depth=*/0).ok());
  EXPECT_TRUE(ParseJsonBounded("[]", "b", /*max_depth=*/1).ok());
}

// The shape that crashed the master (60,000 levels on the login route) and far beyond: refused
// at the limit, whether or not the document ever closes.
TEST(ParseJsonBoundedTest, RefusesMillionsOfOpenBracketsCheaply) {
  for (int depth : {60000, 200000, 2000000}) {
    auto r = ParseJsonBounded(std::string(depth, '['), "body");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("nesting exceeds"), std::string::npos) << depth;
  }
}

TEST(ParseJsonBoundedTest, SyntaxErrorsSayNotValidJson) {
  for (const char* text : {"", "{", "[1,]", "{\"a\" 1}", "\xff"}) {
    auto r = ParseJsonBounded(text, "request body");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message(), "request body is not valid JSON") << text;
  }
}

}  // namespace
}  // namespace det
