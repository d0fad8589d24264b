// Synchronous SHA behind `adaptive` and `adaptive_simple`: the reference §4.3 shapes and rung
// setups.
#include "master/searcher/sync_halving.h"

#include <gtest/gtest.h>

#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using testing::Config;
using testing::Lengths;
using testing::PerTrial;
using testing::RunSearch;
using testing::Shapes;
using U64s = std::vector<uint64_t>;

constexpr char kAdaptive[] =
    "{name: adaptive, metric: loss, max_length: {batches: 3200}, budget: {batches: 6400}, "
    "mode: standard, max_rungs: 2, divisor: 4";

// Budget-based rung setup: R=2, L=3200, budget 3200 per bracket, d=4 -> units 800/3200,
// start 2/1.
TEST(SyncHalvingTest, RungsForBudget) {
  auto r = SyncHalvingRungsForBudget(2, 3200, 3200, 4);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].units, 800u);
  EXPECT_EQ(r[0].start, 2);
  EXPECT_EQ(r[0].promote, 1);
  EXPECT_EQ(r[1].units, 3200u);
  EXPECT_EQ(r[1].start, 1);
  auto one = SyncHalvingRungsForBudget(1, 3200, 3200, 4);
  EXPECT_EQ(one[0].units, 3200u);
  EXPECT_EQ(one[0].start, 1);
  // A budget too small for one trial leaves rung 0 empty (not floored at 1).
  EXPECT_EQ(SyncHalvingRungsForBudget(2, 3200, 100, 4)[0].start, 0);
}

// §4.3 SHA-adaptive: metrics .1,.2,.3 -> [800, 3200], [800], [3200].
TEST(SyncHalvingTest, AdaptiveShapes) {
  std::vector<U64s> expected{{800, 3200}, {800}, {3200}};
  SimulateOptions o;
  o.metric_fn = PerTrial({.1, .2, .3});
  EXPECT_EQ(Lengths(RunSearch(Config(std::string(kAdaptive) + "}"), o)), expected);

  SimulateOptions exit = o;
  exit.exit_fn = [](int64_t i, uint64_t l) -> std::optional<ExitedReason> {
    if (i == 1 && l == 800) return ExitedReason::kErrored;
    return std::nullopt;
  };
  EXPECT_EQ(Lengths(RunSearch(Config(std::string(kAdaptive) + "}"), exit)), expected);

  SimulateOptions larger;
  larger.metric_fn = PerTrial({.3, .2, .1});
  EXPECT_EQ(Lengths(RunSearch(Config(std::string(kAdaptive) + ", smaller_is_better: false}"), larger)),
            expected);
}

// §4.3 adaptive_simple: 8 trials over brackets of 5/4/3 rungs with 3/3/2 trials.
TEST(SyncHalvingTest, AdaptiveSimpleShapes) {
  SimulateOptions o;
  o.metric = SimulatedMetric::kTrialIndex;
  auto r = RunSearch(Config("{name: adaptive_simple, metric: loss, max_length: {batches: 3200}, "
                      "max_trials: 8, mode: standard, max_rungs: 5, divisor: 4}"),
               o);
  EXPECT_EQ(Lengths(r), (std::vector<U64s>{{12, 50, 200, 800, 3200},
                                            {12},
                                            {12},
                                            {50, 200, 800, 3200},
                                            {50},
                                            {50},
                                            {200, 800, 3200},
                                            {200}}));
}

// §4.3 corner: max_length 100, max_trials 1, d=4, max_rungs 3 (each bracket runs >= 1 trial).
TEST(SyncHalvingTest, AdaptiveSimpleCorner) {
  std::string base = "{name: adaptive_simple, metric: loss, max_length: {batches: 100}, "
                     "max_trials: 1, divisor: 4, max_rungs: 3, mode: ";
  auto cons = RunSearch(Config(base + "conservative}"));
  EXPECT_EQ(cons.Shapes(), (Shapes{{"100", 1}, {"25 100", 1}, {"6 25 100", 1}}));
  auto aggr = RunSearch(Config(base + "aggressive}"));
  EXPECT_EQ(aggr.Shapes(), (Shapes{{"6 25 100", 1}}));
}

// Progress ends at exactly 1 and never decreases in these synchronous runs.
TEST(SyncHalvingTest, ProgressIsMonotone) {
  auto r = RunSearch(Config(std::string(kAdaptive) + "}"));
  ASSERT_FALSE(r.progress.empty());
  for (size_t i = 1; i < r.progress.size(); ++i) EXPECT_GE(r.progress[i], r.progress[i - 1]);
  EXPECT_EQ(r.progress.back(), 1.0);
}

}  // namespace
}  // namespace det::master::searcher
