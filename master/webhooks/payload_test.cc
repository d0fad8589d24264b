#include "master/webhooks/payload.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace det::master::webhooks {
namespace {

using nlohmann::json;

ExperimentFacts Completed() {
  ExperimentFacts e;
  e.id = 12;
  e.state = "COMPLETED";
  e.name = "mnist";
  e.start_micros = 1'000'000;
  e.end_micros = 1'000'000 + 3'720'000'000;  // 1 h 2 min
  e.resource_pool = "default";
  e.slots_per_trial = 2;
  e.workspace = "Uncategorized";
  e.project = "Uncategorized";
  return e;
}

const Stamp kStamp{"5b1e4c1e-1111-4222-8333-444455556666", 1'700'000'000'000'000};

TEST(PayloadTest, DefaultExperimentEvent) {
  json p = json::parse(ExperimentPayload("DEFAULT", "EXPERIMENT_STATE_CHANGE", Completed(),
                                         std::nullopt, kStamp, ""));
  EXPECT_EQ(p["event_id"], kStamp.event_id);
  EXPECT_EQ(p["event_type"], "EXPERIMENT_STATE_CHANGE");
  EXPECT_EQ(p["timestamp"], 1'700'000'000);
  EXPECT_EQ(p["condition"], json({{"state", "COMPLETED"}}));
  json e = p["event_data"]["experiment"];
  EXPECT_EQ(e["id"], 12);
  EXPECT_EQ(e["duration"], 3720);
  EXPECT_EQ(e["slots_per_trial"], 2);
  EXPECT_EQ(e["workspace"], "Uncategorized");
  EXPECT_FALSE(e.contains("trial_id"));
  EXPECT_FALSE(p["event_data"].contains("custom_data"));
}

TEST(PayloadTest, SlackExperimentMessage) {
  json p = json::parse(
      ExperimentPayload("SLACK", "EXPERIMENT_STATE_CHANGE", Completed(), std::nullopt, kStamp, ""));
  EXPECT_EQ(p["blocks"][0]["text"],
            json({{"type", "plain_text"}, {"text", "Your experiment completed successfully 🎉"}}));
  json a = p["attachments"][0];
  EXPECT_EQ(a["color"], "#13B670");
  EXPECT_EQ(a["blocks"][0]["text"]["text"], "✅ mnist (#12)");
  EXPECT_EQ(a["blocks"][0]["fields"][0],
            json({{"type", "mrkdwn"}, {"text", "*Status*: Completed"}}));
  EXPECT_EQ(a["blocks"][0]["fields"][1]["text"], "*Duration*: 1h 2min");
  ExperimentFacts err = Completed();
  err.state = "ERROR";
  err.workspace_id = 3;
  json q = json::parse(ExperimentPayload("SLACK", "EXPERIMENT_STATE_CHANGE", err, std::nullopt,
                                         kStamp, "https://det.example"));
  EXPECT_EQ(q["attachments"][0]["color"], "#DD5040");
  EXPECT_EQ(q["attachments"][0]["blocks"][0]["text"]["text"],
            "❌ <https://det.example/det/experiments/12/overview | mnist (#12)>");
  EXPECT_EQ(q["attachments"][0]["blocks"][0]["fields"][2]["text"],
            "*Workspace*: <https://det.example/det/workspaces/3/projects | Uncategorized>");
}

TEST(PayloadTest, CustomEventCarriesTheAlertAndTrial) {
  ExperimentFacts e = Completed();
  e.state = "ACTIVE";
  e.trial_id = 40;
  CustomData c{"loss diverged", "nan at step 10", "LOG_LEVEL_ERROR"};
  json p = json::parse(ExperimentPayload("DEFAULT", "CUSTOM", e, c, kStamp, ""));
  EXPECT_EQ(p["event_type"], "CUSTOM");
  EXPECT_EQ(p["event_data"]["custom_data"]["title"], "loss diverged");
  EXPECT_EQ(p["event_data"]["experiment"]["trial_id"], 40);
  json s = json::parse(ExperimentPayload("SLACK", "CUSTOM", e, c, kStamp, ""));
  EXPECT_EQ(s["blocks"][0]["fields"][0]["text"], "*Level*: LOG_LEVEL_ERROR");
  EXPECT_EQ(s["attachments"][0]["blocks"][0]["fields"].back()["text"], "*Trial ID*: 40");
}

TEST(PayloadTest, TaskLogEvent) {
  TaskLogFacts t{"task-1", "TRIAL", 3, 9, "agent-a", "exit code 7\n", "exit.*7"};
  json p = json::parse(TaskLogPayload("DEFAULT", t, kStamp, ""));
  EXPECT_EQ(p["event_type"], "TASK_LOG");
  EXPECT_EQ(p["condition"], json({{"regex", "exit.*7"}}));
  EXPECT_EQ(p["event_data"]["task_log"]["node_name"], "agent-a");
  std::string slack =
      json::parse(TaskLogPayload("SLACK", t, kStamp, ""))["blocks"][0]["text"]["text"];
  EXPECT_NE(slack.find("Experiment ID `3`, Trial ID `9`, running on node `agent-a`"),
            std::string::npos);
  EXPECT_NE(slack.find("This log matched the regex"), std::string::npos);
  EXPECT_NE(slack.find("View full logs at /det/experiments/3/trials/9/logs"), std::string::npos);
}

TEST(PayloadTest, NotUtf8BytesAreReplacedNotThrown) {
  TaskLogFacts t{"task-1", "COMMAND", 0, 0, "a", std::string("bad \xff byte"), "bad"};
  EXPECT_NO_THROW(json::parse(TaskLogPayload("DEFAULT", t, kStamp, "")));
  EXPECT_NO_THROW(json::parse(TaskLogPayload("SLACK", t, kStamp, "")));
}

TEST(SignatureTest, IsHmacSha256OfTimestampCommaBody) {
  // Python: hmac.new(b"key", b"1,{}", hashlib.sha256).hexdigest()
  EXPECT_EQ(SignPayload("key", 1, "{}"),
            "c36b4a0d73fd874169b3e158456333bc4f9aae77bf5969f9993285932b155c86");
  EXPECT_NE(SignPayload("key", 2, "{}"), SignPayload("key", 1, "{}"));
  EXPECT_NE(SignPayload("other", 1, "{}"), SignPayload("key", 1, "{}"));
}

}  // namespace
}  // namespace det::master::webhooks
