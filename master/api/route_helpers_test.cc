#include "master/api/route_helpers.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace det::master::api
