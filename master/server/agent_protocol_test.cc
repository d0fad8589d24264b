#include "master/server/agent_protocol.h"

#include <gtest/gtest.h>

namespace det::master::server {
namespace {

using nlohmann::json;

TEST(AgentProtocolTest, CommandsHaveTheProtocolsShape) {
  StartCommand start;
  start.allocation_id = "3.a.1";
  start.task_id = "3.a";
  start.slot_ids = {0, 1};
  start.entrypoint = "python3 train.py";
  start.env["DET_TRIAL_ID"] = "7";
  EXPECT_EQ(CommandJson(start), json::parse(R"({"type": "start", "allocationId": "3.a.1",
      "taskId": "3.a", "slotIds": [0, 1], "entrypoint": "python3 train.py",
      "env": {"DET_TRIAL_ID": "7"}})"));
  start.task_type = "TYPE_COMMAND";
  start.container = json{{"image", "img"}};
  json with = CommandJson(start);
  EXPECT_EQ(with["taskType"], "TYPE_COMMAND");
  EXPECT_EQ(with["container"]["image"], "img");
  EXPECT_EQ(CommandJson(KillCommand{"3.a.1"}),
            json::parse(R"({"type": "kill", "allocationId": "3.a.1"})"));
}

TEST(AgentProtocolTest, EventsAreTypedAndMalformedOnesNamed) {
  auto events = ParseAgentEvents(json::parse(R"({"events": [
      {"type": "started", "allocationId": "a", "pid": 10},
      {"type": "exited", "allocationId": "a", "exitCode": 137, "error": "killed"},
      {"type": "heartbeat", "allocationId": "b"}]})"));
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].type, AgentEvent::Type::kStarted);
  EXPECT_EQ((*events)[1].type, AgentEvent::Type::kExited);
  EXPECT_EQ((*events)[1].exit_code, 137);
  EXPECT_EQ((*events)[1].error, "killed");
  EXPECT_EQ((*events)[2].type, AgentEvent::Type::kOther);
  EXPECT_EQ((*events)[2].raw["allocationId"], "b");
  EXPECT_TRUE(ParseAgentEvents(json::object())->empty());

  for (const char* bad :
       {R"(null)", R"({"events": {}})", R"({"events": [1]})", R"({"events": [{"type": 3}]})",
        R"({"events": [{"allocationId": ["x"]}]})",
        R"({"events": [{"type": "exited", "exitCode": "0"}]})",
        R"({"events": [{"type": "exited", "error": 1}]})"}) {
    auto r = ParseAgentEvents(json::parse(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("events"), std::string::npos) << r.status().ToString();
  }
}

}  // namespace
}  // namespace det::master::server
