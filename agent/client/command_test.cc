#include "agent/client/command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/launcher/launcher.h"

namespace det::agent {
namespace {

TEST(CommandTest, ParsesStart) {
  auto j = nlohmann::json::parse(R"({"seq": 7, "type": "start", "allocationId": "1.t.1",
      "taskId": "1.t", "slotIds": [0, 1], "entrypoint": ["python3", "x.py"],
      "env": {"DET_SESSION_TOKEN": "tok", "DET_TRIAL_ID": 3}})");
  auto c = ParseCommand(j);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->seq, 7);
  EXPECT_EQ(c->type, "start");
  EXPECT_EQ(c->allocation_id, "1.t.1");
  EXPECT_EQ(c->task_id, "1.t");
  EXPECT_THAT(c->slot_ids, ::testing::ElementsAre(0, 1));
  EXPECT_TRUE(c->entrypoint.is_array());
  EXPECT_EQ(c->env["DET_SESSION_TOKEN"], "tok");
  EXPECT_EQ(c->env["DET_TRIAL_ID"], "3");
  EXPECT_TRUE(c->parse_error.empty());
}

TEST(CommandTest, ParsesKillAndSignalAndStringSeq) {
  auto body = R"({"commands": [{"seq": "8", "type": "kill", "allocationId": "a"},
      {"seq": 9, "type": "signal", "allocationId": "a", "signal": "SIGTERM"},
      {"seq": 10, "type": "reboot", "allocationId": "a"}]})";
  auto cs = ParseCommandsBody(body);
  ASSERT_TRUE(cs.ok());
  ASSERT_EQ(cs->size(), 3u);
  EXPECT_EQ((*cs)[0].seq, 8);
  EXPECT_EQ((*cs)[0].type, "kill");
  EXPECT_EQ((*cs)[1].signal, "SIGTERM");
  EXPECT_FALSE((*cs)[2].parse_error.empty());
  EXPECT_EQ((*cs)[2].seq, 10);
}

TEST(CommandTest, Malformed) {
  EXPECT_FALSE(ParseCommandsBody("not json").ok());
  EXPECT_FALSE(ParseCommandsBody(R"({"commands": [{"type": "kill"}]})").ok());
  auto empty = ParseCommandsBody(R"({"commands": []})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto c = ParseCommand(nlohmann::json::parse(R"({"seq": 1, "type": "start"})"));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->parse_error.empty());
}

TEST(SignalNameTest, Parses) {
  EXPECT_EQ(*ParseSignal("SIGTERM"), 15);
  EXPECT_EQ(*ParseSignal("TERM"), 15);
  EXPECT_EQ(*ParseSignal("sigkill"), 9);
  EXPECT_EQ(*ParseSignal("10"), 10);
  EXPECT_FALSE(ParseSignal("SIGNOPE").ok());
  EXPECT_FALSE(ParseSignal("0").ok());
}

}  // namespace
}  // namespace det::agent
