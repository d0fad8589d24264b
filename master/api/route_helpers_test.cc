#include "master/api/route_helpers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace det::master::api {
namespace {

using nlohmann::json;

// Ensures null fields vanish at every depth (Determined's client sends unset fields as null),
// while nulls inside free-form objects stay values.
TEST(RouteHelpersTest, ParseBodyDropsNullFieldsOutsideFreeFormObjects) {
  server::HttpRequest req;
  req.body = R"({"updates": [{"jobId": "j", "priority": 10, "weight": null, "aheadOf": null}],
                 "resources": {"maxSlots": null, "weight": 2},
                 "metadata": {"kept": null, "nested": {"also": null}},
                 "name": null})";
  Result<json> body = ParseBody(req);
  ASSERT_TRUE(body.ok()) << body.status().message();
  EXPECT_EQ((*body)["updates"][0], (json{{"jobId", "j"}, {"priority", 10}}));
  EXPECT_EQ((*body)["resources"], (json{{"weight", 2}}));
  EXPECT_FALSE(body->contains("name"));
  EXPECT_TRUE((*body)["metadata"].contains("kept"));
  EXPECT_TRUE((*body)["metadata"]["nested"].contains("also"));
}

// Ensures an empty body is {} and invalid JSON is an error.
TEST(RouteHelpersTest, ParseBodyEmptyAndInvalid) {
  server::HttpRequest req;
  EXPECT_EQ(*ParseBody(req), json::object());
  req.body = "{";
  EXPECT_FALSE(ParseBody(req).ok());
}

// A 60,000-level body on the login route overflowed the stack of the recursive null-dropping walk.
TEST(RouteHelpersTest, ParseBodyRefusesDeepNestingBeforeWalkingIt) {
  server::HttpRequest req;
  for (int depth : {300, 60000, 200000}) {
    req.body = std::string(depth, '[') + std::string(depth, ']');
    Result<json> body = ParseBody(req);
    ASSERT_FALSE(body.ok()) << depth;
    EXPECT_EQ(body.status().message(), "request body nesting exceeds 256 levels");
  }
  req.body = std::string(256, '[') + std::string(256, ']');
  EXPECT_TRUE(ParseBody(req).ok());
}

// Values built elsewhere (not through ParseBody) may be deeper: the walk keeps its own stack.
TEST(RouteHelpersTest, DropNullFieldsWalksDeepValuesWithoutRecursion) {
  json root = json::object();
  json* cur = &root;
  for (int i = 0; i < 200000; ++i) {
    (*cur)["gone"] = nullptr;
    cur = &((*cur)["next"] = json::object());
  }
  (*cur)["gone"] = nullptr;
  (*cur)["kept"] = 1;
  DropNullFields(root);
  const json* at = &root;
  for (int i = 0; i < 200000; ++i) {
    ASSERT_FALSE(at->contains("gone")) << i;
    at = &(*at)["next"];
  }
  EXPECT_EQ(*at, (json{{"kept", 1}}));
}

server::HttpRequest WithParam(const std::string& value) {
  server::HttpRequest req;
  req.params["id"] = value;
  return req;
}

// Ids are the whole parameter in decimal: no sign, space, NUL or trailing bytes; leading zeros are
// accepted as Determined (Go's strconv.ParseInt) accepts them.
TEST(RouteHelpersTest, PathIdTakesOnlyAWholePositiveDecimal) {
  EXPECT_EQ(*PathId(WithParam("1"), "id"), 1);
  EXPECT_EQ(*PathId(WithParam("01"), "id"), 1);
  EXPECT_EQ(*PathId(WithParam("9223372036854775807"), "id"), INT64_MAX);
  for (std::string bad : {std::string("1\0", 2), std::string("1\0junk", 6), std::string("1 "),
                          std::string(" 1"), std::string("+1"), std::string("-1"),
                          std::string("0"), std::string(""), std::string("1x"),
                          std::string("9223372036854775808"), std::string("0x10")}) {
    Result<int64_t> id = PathId(WithParam(bad), "id");
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(id.status().message(), "id: must be a positive integer (got '" + bad + "')");
  }
  EXPECT_EQ(PathId(server::HttpRequest{}, "id").status().message(), "id: missing");
}

TEST(RouteHelpersTest, QueryIntTakesOnlyAWholeDecimal) {
  server::HttpRequest req;
  req.query["limit"] = "-5";
  EXPECT_EQ(*QueryInt(req, "limit", 0), -5);
  for (std::string bad : {std::string("5\0", 2), std::string("5 "), std::string("5x")}) {
    req.query["limit"] = bad;
    EXPECT_FALSE(QueryInt(req, "limit", 0).ok()) << bad;
  }
}

}  // namespace
}  // namespace det::master::api
