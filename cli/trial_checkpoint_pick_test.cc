#include "cli/trial_checkpoint_pick.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using nlohmann::json;

json Ckpt(const std::string& uuid, int64_t steps, std::optional<double> searcher,
          std::optional<double> acc, const std::string& state = "STATE_COMPLETED") {
  json training = {{"experimentConfig", {{"searcher", {{"smaller_is_better", true}}}}}};
  if (searcher) training["searcherMetric"] = *searcher;
  if (acc) training["validationMetrics"] = {{"avgMetrics", {{"accuracy", *acc}}}};
  return {{"uuid", uuid},
          {"state", state},
          {"metadata", {{"steps_completed", steps}}},
          {"training", training}};
}

TrialCheckpointPick Pick(bool latest, std::string sort_by = "",
                         std::optional<bool> smaller = std::nullopt) {
  TrialCheckpointPick p;
  p.latest = latest;
  p.sort_by = std::move(sort_by);
  p.smaller_is_better = smaller;
  return p;
}

const json kCheckpoints = json::array(
    {Ckpt("a", 10, 0.5, 0.7), Ckpt("b", 20, 0.3, 0.9), Ckpt("c", 30, 0.4, 0.8),
     Ckpt("d", 40, 0.1, 0.99, "STATE_DELETED"), Ckpt("e", 25, std::nullopt, std::nullopt)});

TEST(TrialCheckpointPickTest, LatestIsTheMostStepsAmongDownloadable) {
  auto c = PickTrialCheckpoint(kCheckpoints, Pick(true));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["uuid"], "c");
}

TEST(TrialCheckpointPickTest, BestUsesTheSearcherMetricAndItsDirection) {
  auto c = PickTrialCheckpoint(kCheckpoints, Pick(false));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["uuid"], "b");
}

TEST(TrialCheckpointPickTest, BestBySortByNeedsADirection) {
  auto bad = PickTrialCheckpoint(kCheckpoints, Pick(false, "accuracy"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--smaller-is-better"), std::string::npos);
  auto c = PickTrialCheckpoint(kCheckpoints, Pick(false, "accuracy", false));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["uuid"], "b");
  auto low = PickTrialCheckpoint(kCheckpoints, Pick(false, "accuracy", true));
  ASSERT_TRUE(low.ok());
  EXPECT_EQ((*low)["uuid"], "a");
}

TEST(TrialCheckpointPickTest, NoneQualifies) {
  auto c = PickTrialCheckpoint(json::array({Ckpt("x", 5, 0.1, 0.1, "STATE_DELETED")}), Pick(true));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  auto m = PickTrialCheckpoint(json::array({Ckpt("y", 5, std::nullopt, 0.1)}), Pick(false));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("searcher metric"), std::string::npos);
}

}  // namespace
}  // namespace det::cli
