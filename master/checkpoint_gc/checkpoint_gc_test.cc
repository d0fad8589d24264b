#include "master/checkpoint_gc/checkpoint_gc.h"

#include <cmath>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace det::master::checkpoint_gc {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Checkpoint "c<steps>" of trial `trial` at `steps`, reported in that order.
GcCheckpoint Ckpt(int64_t trial, int64_t steps, std::optional<double> metric, int64_t id = -1) {
  GcCheckpoint c;
  c.uuid = "t" + std::to_string(trial) + "-c" + std::to_string(steps);
  c.trial_id = trial;
  c.steps_completed = steps;
  c.report_time = 1000 + steps;
  c.searcher_metric = metric;
  c.id = id >= 0 ? id : trial * 1000 + steps;
  return c;
}

std::set<int64_t> KeptSteps(const std::vector<GcCheckpoint>& cps, const GcPolicy& p) {
  auto del = SelectCheckpointsToDelete(cps, p);
  std::set<std::string> gone(del.begin(), del.end());
  std::set<int64_t> kept;
  for (const auto& c : cps) {
    if (!gone.count(c.uuid)) kept.insert(c.steps_completed);
  }
  return kept;
}

// tests reference §3.9, test_gc_checkpoints_lfs: 10 checkpoints at batches 1..10 with the
// metric scaled by 0.9 (decreasing) or 1.1 (increasing) per step.
std::vector<GcCheckpoint> TenCheckpoints(double scale) {
  std::vector<GcCheckpoint> cps;
  for (int s = 1; s <= 10; ++s) cps.push_back(Ckpt(1, s, std::pow(scale, s)));
  return cps;
}

TEST(CheckpointGc, ReferenceScenarioDecreasingMetric) {
  GcPolicy p;
  p.save_experiment_best = 3;
  p.save_trial_latest = 2;
  EXPECT_EQ(KeptSteps(TenCheckpoints(0.9), p), (std::set<int64_t>{8, 9, 10}));
  EXPECT_THAT(SelectCheckpointsToDelete(TenCheckpoints(0.9), p),
              ElementsAre("t1-c1", "t1-c2", "t1-c3", "t1-c4", "t1-c5", "t1-c6", "t1-c7"));
}

TEST(CheckpointGc, ReferenceScenarioIncreasingMetric) {
  GcPolicy p;
  p.save_experiment_best = 3;
  p.save_trial_latest = 2;
  EXPECT_EQ(KeptSteps(TenCheckpoints(1.1), p), (std::set<int64_t>{1, 2, 3, 9, 10}));
}

TEST(CheckpointGc, LargerIsBetterFlipsTheOrder) {
  GcPolicy p;
  p.save_experiment_best = 3;
  p.save_trial_latest = 2;
  p.smaller_is_better = false;
  EXPECT_EQ(KeptSteps(TenCheckpoints(1.1), p), (std::set<int64_t>{8, 9, 10}));
  EXPECT_EQ(KeptSteps(TenCheckpoints(0.9), p), (std::set<int64_t>{1, 2, 3, 9, 10}));
}

TEST(CheckpointGc, DefaultsKeepTrialBestAndLatest) {
  GcPolicy p;  // 0 / 1 / 1
  EXPECT_EQ(p.save_experiment_best, 0);
  EXPECT_EQ(p.save_trial_best, 1);
  EXPECT_EQ(p.save_trial_latest, 1);
  // best at step 4 (metric 0.1), latest is 10
  std::vector<GcCheckpoint> cps;
  for (int s = 1; s <= 10; ++s) cps.push_back(Ckpt(1, s, s == 4 ? 0.1 : 1.0 + s));
  EXPECT_EQ(KeptSteps(cps, p), (std::set<int64_t>{4, 10}));
}

TEST(CheckpointGc, SaveTrialBestTenKeepsAll) {
  GcPolicy p;
  p.save_trial_best = 10;
  EXPECT_THAT(SelectCheckpointsToDelete(TenCheckpoints(0.9), p), IsEmpty());
}

TEST(CheckpointGc, AllZeroDeletesEverything) {
  GcPolicy p;
  p.save_trial_best = 0;
  p.save_trial_latest = 0;
  EXPECT_EQ(SelectCheckpointsToDelete(TenCheckpoints(0.9), p).size(), 10u);
}

TEST(CheckpointGc, TiesAreBrokenByReportOrder) {
  GcPolicy p;  // keep trial best 1 and latest 1
  std::vector<GcCheckpoint> cps = {Ckpt(1, 1, 0.5, /*id=*/7), Ckpt(1, 2, 0.5, /*id=*/3),
                                   Ckpt(1, 3, 0.5, /*id=*/9), Ckpt(1, 4, 0.9, /*id=*/10)};
  // equal metrics: the lowest id (step 2) is the best; step 4 is the latest
  EXPECT_EQ(KeptSteps(cps, p), (std::set<int64_t>{2, 4}));
  auto ranks = RankCheckpoints(cps, p);
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[1].experiment_rank, 1);
  EXPECT_EQ(ranks[0].experiment_rank, 2);
  EXPECT_EQ(ranks[2].experiment_rank, 3);
  EXPECT_EQ(ranks[3].trial_order_rank, 1);
}

TEST(CheckpointGc, NullMetricsSurviveOnlyAsLatest) {
  GcPolicy p;
  p.save_experiment_best = 5;
  p.save_trial_best = 5;
  p.save_trial_latest = 1;
  std::vector<GcCheckpoint> cps = {Ckpt(1, 1, std::nullopt), Ckpt(1, 2, 0.3), Ckpt(1, 3, std::nullopt),
                                   Ckpt(1, 4, std::nullopt)};
  // nulls rank last and are deleted unless latest; the one with a metric is kept as best
  EXPECT_EQ(KeptSteps(cps, p), (std::set<int64_t>{2, 4}));
  auto ranks = RankCheckpoints(cps, p);
  EXPECT_EQ(ranks[1].experiment_rank, 1);
  EXPECT_FALSE(ranks[0].has_metric);
  EXPECT_GT(ranks[0].experiment_rank, ranks[1].experiment_rank);
}

TEST(CheckpointGc, MultipleTrials) {
  GcPolicy p;
  p.save_experiment_best = 1;
  p.save_trial_best = 1;
  p.save_trial_latest = 1;
  std::vector<GcCheckpoint> cps;
  // trial 1: metrics 5,4,3 at steps 1..3; trial 2: metrics 1,2,9 at steps 1..3
  cps.push_back(Ckpt(1, 1, 5));
  cps.push_back(Ckpt(1, 2, 4));
  cps.push_back(Ckpt(1, 3, 3));
  cps.push_back(Ckpt(2, 1, 1));
  cps.push_back(Ckpt(2, 2, 2));
  cps.push_back(Ckpt(2, 3, 9));
  // trial 1 keeps c3 (best and latest); trial 2 keeps c1 (experiment and trial best) and c3
  EXPECT_THAT(SelectCheckpointsToDelete(cps, p), UnorderedElementsAre("t1-c1", "t1-c2", "t2-c2"));

  p.save_trial_best = 0;
  p.save_experiment_best = 2;  // the two best overall: t2-c1 (1), t2-c2 (2)
  EXPECT_THAT(SelectCheckpointsToDelete(cps, p), UnorderedElementsAre("t1-c1", "t1-c2"));
}

TEST(CheckpointGc, IneligibleCheckpointsAreNeverSelectedNorRanked) {
  GcPolicy p;
  p.save_trial_best = 0;
  p.save_trial_latest = 0;
  auto unreported = Ckpt(1, 1, 0.1);
  unreported.report_time.reset();
  auto warm_start = Ckpt(1, 2, 0.2);
  warm_start.keep = true;
  auto gone = Ckpt(1, 3, 0.3);
  gone.state = "DELETED";
  auto partial = Ckpt(1, 4, 0.4);
  partial.state = "PARTIALLY_DELETED";
  std::vector<GcCheckpoint> cps = {unreported, warm_start, gone, partial};
  EXPECT_THAT(SelectCheckpointsToDelete(cps, p), ElementsAre("t1-c4"));
  EXPECT_EQ(RankCheckpoints(cps, p).size(), 2u);
}

TEST(CheckpointGc, EmptyInput) {
  EXPECT_THAT(SelectCheckpointsToDelete({}, GcPolicy{}), IsEmpty());
}

TEST(CheckpointGcPolicy, FromConfig) {
  auto p = PolicyFromExperimentConfig(nlohmann::json::parse(R"({
    "checkpoint_storage": {"type": "shared_fs", "host_path": "/tmp", "save_experiment_best": 3,
                           "save_trial_latest": 2},
    "searcher": {"name": "single", "metric": "acc", "smaller_is_better": false},
    "checkpoint_policy": "all"})"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->save_experiment_best, 3);
  EXPECT_EQ(p->save_trial_best, 1);
  EXPECT_EQ(p->save_trial_latest, 2);
  EXPECT_FALSE(p->smaller_is_better);
  EXPECT_EQ(p->checkpoint_policy, "all");

  auto d = PolicyFromExperimentConfig(nlohmann::json::object());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->save_experiment_best, 0);
  EXPECT_TRUE(d->smaller_is_better);
  EXPECT_EQ(d->checkpoint_policy, "best");

  auto neg = PolicyFromExperimentConfig(
      nlohmann::json::parse(R"({"checkpoint_storage": {"save_trial_best": -1}})"));
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.status().message(), ::testing::HasSubstr("save_trial_best"));
  EXPECT_FALSE(PolicyFromExperimentConfig(nlohmann::json::parse(R"({"checkpoint_policy": "some"})")).ok());
  EXPECT_FALSE(
      PolicyFromExperimentConfig(nlohmann::json::parse(R"({"searcher": {"smaller_is_better": 1}})")).ok());
}

}  // namespace
}  // namespace det::master::checkpoint_gc
