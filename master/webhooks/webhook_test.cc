#include "master/webhooks/webhook.h"

#include <gtest/gtest.h>

namespace det::master::webhooks {
namespace {

using nlohmann::json;

json Body() {
  return {{"url", "http://127.0.0.1:5005/hook"},
          {"webhookType", "WEBHOOK_TYPE_SLACK"},
          {"triggers", json::array({{{"triggerType", "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE"},
                                     {"condition", {{"state", "COMPLETED"}}}}})},
          {"mode", "WEBHOOK_MODE_WORKSPACE"},
          {"name", ""},
          {"workspaceId", nullptr}};
}

std::string Error(const json& body) {
  Result<store::WebhookRow> w = ParseWebhook(body);
  return w.ok() ? "" : w.status().message();
}

TEST(ParseWebhookTest, AcceptsDeterminedsShapeAndStoresShortNames) {
  Result<store::WebhookRow> w = ParseWebhook(Body());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->webhook_type, "SLACK");
  EXPECT_EQ(w->mode, "WORKSPACE");
  EXPECT_FALSE(w->workspace_id.has_value());
  ASSERT_EQ(w->triggers.size(), 1u);
  EXPECT_EQ(w->triggers[0].trigger_type, "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(w->triggers[0].condition, json({{"state", "COMPLETED"}}));
  json shown = WebhookJson(*w);
  EXPECT_EQ(shown["webhookType"], "WEBHOOK_TYPE_SLACK");
  EXPECT_EQ(shown["mode"], "WEBHOOK_MODE_WORKSPACE");
  EXPECT_EQ(shown["workspaceId"], 0);
  EXPECT_EQ(shown["triggers"][0]["triggerType"], "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE");
}

TEST(ParseWebhookTest, EachBadFieldIsNamed) {
  json b = Body();
  b["url"] = "file:///etc/passwd";
  EXPECT_NE(Error(b).find("url: \"file:///etc/passwd\" is not an http:// or https:// URL"),
            std::string::npos)
      << Error(b);
  b = Body();
  b["url"] = "http://";
  EXPECT_NE(Error(b).find("has no host"), std::string::npos);
  b = Body();
  b["webhookType"] = "WEBHOOK_TYPE_TEAMS";
  EXPECT_NE(Error(b).find("webhookType: \"WEBHOOK_TYPE_TEAMS\" is not one of"), std::string::npos);
  b = Body();
  b["triggers"] = json::array();
  EXPECT_EQ(Error(b), "triggers: at least one trigger required");
  b = Body();
  b["triggers"][0]["condition"] = {{"state", "FINISHED"}};
  EXPECT_NE(Error(b).find("triggers[0].condition.state: \"FINISHED\" is not an experiment state"),
            std::string::npos);
  b = Body();
  b["triggers"][0] = {{"triggerType", "TRIGGER_TYPE_TASK_LOG"}, {"condition", {{"regex", "(a"}}}};
  EXPECT_NE(Error(b).find("triggers[0].condition.regex: \"(a\" is not a valid regular expression"),
            std::string::npos);
  b["triggers"][0]["condition"] = {{"regex", "a"}, {"other", 1}};
  EXPECT_NE(Error(b).find("must be {\"regex\": <string>}"), std::string::npos);
  b = Body();
  b["triggers"][0] = {{"triggerType", "TRIGGER_TYPE_CUSTOM"}};
  EXPECT_NE(Error(b).find("a CUSTOM trigger needs mode WEBHOOK_MODE_SPECIFIC"), std::string::npos);
  b["mode"] = "WEBHOOK_MODE_SPECIFIC";
  EXPECT_EQ(Error(b), "");
  b = Body();
  b["workspaceId"] = -3;
  EXPECT_NE(Error(b).find("workspaceId: must be a workspace id"), std::string::npos);
  b = Body();
  b["triggers"][0]["triggerType"] = "TRIGGER_TYPE_METRIC_THRESHOLD_EXCEEDED";
  EXPECT_NE(Error(b).find("is not supported"), std::string::npos);
}

TEST(ParseWebhookTest, SizesAreBounded) {
  json b = Body();
  b["url"] = "http://h/" + std::string(kMaxUrlBytes, 'a');
  EXPECT_NE(Error(b).find("bytes, more than 2048"), std::string::npos);
  b = Body();
  for (size_t i = 0; i < kMaxTriggers; ++i) b["triggers"].push_back(b["triggers"][0]);
  EXPECT_NE(Error(b).find("triggers, more than 16"), std::string::npos);
  b = Body();
  b["triggers"][0] = {{"triggerType", "TRIGGER_TYPE_TASK_LOG"},
                      {"condition", {{"regex", std::string(kMaxRegexBytes + 1, 'a')}}}};
  EXPECT_NE(Error(b).find("more than 1024"), std::string::npos);
}

TEST(ParseWebhookTest, PatchTakesAUrl) {
  EXPECT_EQ(ParseWebhookPatch({{"url", "https://example.test/x"}}).value(),
            "https://example.test/x");
  EXPECT_FALSE(ParseWebhookPatch({{"url", "ftp://x"}}).ok());
  EXPECT_FALSE(ParseWebhookPatch(json::object()).ok());
}

}  // namespace
}  // namespace det::master::webhooks
