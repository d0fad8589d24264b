#include "agent/client/event_sender.h"

#include <gtest/gtest.h>

#include "agent/testing/fake_poster.h"

namespace det::agent {
namespace {

using std::chrono::milliseconds;
using testing::FakePoster;
using testing::FakePosterState;

std::chrono::steady_clock::time_point In(milliseconds d) {
  return std::chrono::steady_clock::now() + d;
}

TEST(AgentEventTest, Json) {
  auto started = AgentEvent::Started("a", 42).ToJson();
  EXPECT_EQ(started, nlohmann::json::parse(R"({"type":"started","allocationId":"a","pid":42})"));
  auto exited = AgentEvent::Exited("a", 137).ToJson();
  EXPECT_EQ(exited,
            nlohmann::json::parse(R"({"type":"exited","allocationId":"a","exitCode":137})"));
  auto failed = AgentEvent::Exited("a", 1, "boom").ToJson();
  EXPECT_EQ(failed["error"], "boom");
}

TEST(EventSenderTest, RetriesUntilAcceptedAndKeepsOrder) {
  auto state = std::make_shared<FakePosterState>();
  state->FailNext(3);
  EventSender sender(std::make_unique<FakePoster>(state), milliseconds(1), milliseconds(5));
  sender.Enqueue(AgentEvent::Started("a", 1));
  sender.Enqueue(AgentEvent::Exited("a", 0));
  ASSERT_TRUE(sender.Flush(In(milliseconds(10000))));
  std::vector<nlohmann::json> events;
  for (const auto& body : state->bodies()) {
    for (const auto& e : body["events"]) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "started");
  EXPECT_EQ(events[1]["type"], "exited");
  EXPECT_GE(state->attempts(), 4);
}

TEST(EventSenderTest, FlushTimesOutWhileMasterIsDown) {
  auto state = std::make_shared<FakePosterState>();
  state->FailNext(1000000);
  EventSender sender(std::make_unique<FakePoster>(state), milliseconds(1), milliseconds(2));
  sender.Enqueue(AgentEvent::Exited("a", 1));
  EXPECT_FALSE(sender.Flush(In(milliseconds(50))));
  state->FailNext(0);
  EXPECT_TRUE(sender.Flush(In(milliseconds(10000))));
  EXPECT_EQ(state->bodies().size(), 1u);
}

TEST(EventSenderTest, UnsentExitsListsExitsUntilTheMasterAcceptsThem) {
  auto state = std::make_shared<FakePosterState>();
  state->FailNext(1000000);
  EventSender sender(std::make_unique<FakePoster>(state), milliseconds(1), milliseconds(2));
  sender.Enqueue(AgentEvent::Started("a", 1));
  sender.Enqueue(AgentEvent::Exited("b", 0));
  EXPECT_EQ(sender.UnsentExits(), std::set<std::string>{"b"});  // "a" only started
  state->FailNext(0);
  ASSERT_TRUE(sender.Flush(In(milliseconds(10000))));
  EXPECT_TRUE(sender.UnsentExits().empty());
}

TEST(EventSenderTest, RejectedBodyIsDropped) {
  auto state = std::make_shared<FakePosterState>();
  state->FailNext(1, InvalidArgument("bad"));
  EventSender sender(std::make_unique<FakePoster>(state), milliseconds(1), milliseconds(2));
  sender.Enqueue(AgentEvent::Exited("a", 1));
  EXPECT_TRUE(sender.Flush(In(milliseconds(10000))));
  EXPECT_EQ(state->attempts(), 1);
  EXPECT_TRUE(state->bodies().empty());
}

}  // namespace
}  // namespace det::agent
