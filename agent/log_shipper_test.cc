#include "agent/log_shipper.h"

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

LogMetadata Metadata() { return {"1.task", "1.task.1", "agent-1", "1.task.1"}; }

std::vector<nlohmann::json> AllLogs(FakePosterState& state) {
  std::vector<nlohmann::json> out;
  for (const auto& body : state.bodies()) {
    for (const auto& l : body["logs"]) out.push_back(l);
  }
  return out;
}

TEST(LogShipperTest, ShipsParsedLinesWithMetadata) {
  auto state = std::make_shared<FakePosterState>();
  FakeClock clock;
  LogShipper shipper(Metadata(), std::make_unique<FakePoster>(state), &clock);
  shipper.AddLine("stdout", "[rank=1] INFO: hello\n");
  shipper.AddLine("stderr", "plain\n");
  shipper.AddRaw("stderr", "LOG_LEVEL_ERROR", "agent says no\n");
  ASSERT_TRUE(shipper.Flush(In(milliseconds(10000))));
  auto logs = AllLogs(*state);
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0]["taskId"], "1.task");
  EXPECT_EQ(logs[0]["allocationId"], "1.task.1");
  EXPECT_EQ(logs[0]["agentId"], "agent-1");
  EXPECT_EQ(logs[0]["containerId"], "1.task.1");
  EXPECT_EQ(logs[0]["source"], "task");
  EXPECT_EQ(logs[0]["stdtype"], "stdout");
  EXPECT_EQ(logs[0]["rankId"], 1);
  EXPECT_EQ(logs[0]["level"], "LOG_LEVEL_INFO");
  EXPECT_EQ(logs[0]["log"], "hello\n");
  EXPECT_EQ(logs[0]["timestamp"], FormatRfc3339(clock.NowMicros()));
  EXPECT_FALSE(logs[1].contains("rankId"));
  EXPECT_FALSE(logs[1].contains("level"));
  EXPECT_EQ(logs[1]["stdtype"], "stderr");
  EXPECT_EQ(logs[2]["level"], "LOG_LEVEL_ERROR");
  EXPECT_EQ(logs[2]["log"], "agent says no\n");
}

TEST(LogShipperTest, BatchesAtMostMaxLinesAndKeepsOrderThroughFailures) {
  auto state = std::make_shared<FakePosterState>();
  state->FailNext(5);
  FakeClock clock;
  LogShipperOptions options;
  options.max_batch = 7;
  options.flush_interval = milliseconds(5);
  options.initial_backoff = milliseconds(1);
  options.max_backoff = milliseconds(4);
  LogShipper shipper(Metadata(), std::make_unique<FakePoster>(state), &clock, options);
  for (int i = 0; i < 100; ++i) shipper.AddLine("stdout", "line " + std::to_string(i) + "\n");
  ASSERT_TRUE(shipper.Flush(In(milliseconds(20000))));
  for (const auto& body : state->bodies()) EXPECT_LE(body["logs"].size(), 7u);
  auto logs = AllLogs(*state);
  ASSERT_EQ(logs.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(logs[i]["log"], "line " + std::to_string(i) + "\n");
  EXPECT_EQ(shipper.shipped(), 100u);
}

TEST(LogShipperTest, BadUtf8IsReplacedNotFatal) {
  auto state = std::make_shared<FakePosterState>();
  FakeClock clock;
  LogShipper shipper(Metadata(), std::make_unique<FakePoster>(state), &clock);
  shipper.AddLine("stdout", "bad \xff\xfe bytes\n");
  ASSERT_TRUE(shipper.Flush(In(milliseconds(10000))));
  ASSERT_EQ(AllLogs(*state).size(), 1u);
}

TEST(LogShipperTest, FlushWaitsWhileMasterIsDown) {
  auto state = std::make_shared<FakePosterState>();
  state->FailNext(1000000);
  FakeClock clock;
  LogShipperOptions options;
  options.initial_backoff = milliseconds(1);
  options.max_backoff = milliseconds(2);
  LogShipper shipper(Metadata(), std::make_unique<FakePoster>(state), &clock, options);
  shipper.AddLine("stdout", "keep me\n");
  EXPECT_FALSE(shipper.Flush(In(milliseconds(50))));
  state->FailNext(0);
  ASSERT_TRUE(shipper.Flush(In(milliseconds(10000))));
  EXPECT_EQ(AllLogs(*state).size(), 1u);
}

}  // namespace
}  // namespace det::agent
