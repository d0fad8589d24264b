// Simulate / PreviewAsha: outcomes shaped like the reference §4 ({count, length} lists).
#include "master/searcher/simulate.h"

#include <gtest/gtest.h>

#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using testing::Config;
using testing::RunSearch;
using testing::Shapes;

std::vector<std::pair<int64_t, uint64_t>> Pairs(const std::vector<LengthCount>& v) {
  std::vector<std::pair<int64_t, uint64_t>> out;
  for (const auto& lc : v) out.emplace_back(lc.count, lc.length);
  return out;
}

// §4.1 Simulate: adaptive_asha standard, max_rungs 10, max_time 900, d=3, mct 5, 10 trials ->
// [{5 @100}, {3 @300}, {2 @900}].
TEST(SimulateTest, PreviewAshaArithmetic) {
  auto time = PreviewAsha(Config("{name: adaptive_asha, metric: loss, mode: standard, "
                                 "max_rungs: 10, max_time: 900, time_metric: batches, "
                                 "divisor: 3, max_concurrent_trials: 5, max_trials: 10}"));
  ASSERT_TRUE(time.ok()) << time.status().ToString();
  using P = std::vector<std::pair<int64_t, uint64_t>>;
  EXPECT_EQ(Pairs(*time), (P{{5, 100}, {3, 300}, {2, 900}}));
  auto ops = PreviewAsha(Config("{name: adaptive_asha, metric: loss, mode: standard, "
                                "max_rungs: 10, max_length: {batches: 900}, divisor: 3, "
                                "max_concurrent_trials: 5, max_trials: 10}"));
  ASSERT_TRUE(ops.ok());
  EXPECT_EQ(Pairs(*ops), (P{{5, 100}, {3, 300}, {2, 900}}));
  EXPECT_FALSE(PreviewAsha(Config("{name: random, metric: loss, max_trials: 2}")).ok());
}

// §4.1 grid simulate: int [0,10] count 4, mct 2 -> [{4 @ max_length}].
TEST(SimulateTest, Grid) {
  auto r = RunSearch(Config("{name: grid, metric: loss, max_length: {batches: 100}, "
                      "max_concurrent_trials: 2}",
                      0, "  x: {type: int, minval: 0, maxval: 10, count: 4}\n"));
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].count, 4);
  EXPECT_EQ(r.outcomes[0].length, 100u);
  EXPECT_EQ(r.total_units, 400u);
}

// §4.2: random max_trials 4 in records -> 4 x [19200]; single 500 batches -> [500].
TEST(SimulateTest, RandomAndSingle) {
  auto r = RunSearch(Config("{name: random, metric: loss, max_trials: 4, max_concurrent_trials: 2, "
                      "max_length: {records: 19200}}"));
  EXPECT_EQ(r.Shapes(), (Shapes{{"19200", 4}}));
  for (const auto& t : r.trials) {
    int64_t x = t.hparams["x"].get<int64_t>();
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 10);
  }
  auto s = RunSearch(Config("{name: single, metric: loss, max_length: {batches: 500}}"));
  EXPECT_EQ(s.Shapes(), (Shapes{{"500", 1}}));
}

// The default (spread) metric gives a deterministic, ASHA-like shape in time mode.
TEST(SimulateTest, TimeModeDefaultIsDeterministic) {
  auto cfg = Config("{name: adaptive_asha, metric: loss, mode: standard, max_rungs: 10, "
                    "max_time: 900, time_metric: batches, divisor: 3, "
                    "max_concurrent_trials: 5, max_trials: 10}");
  auto a = RunSearch(cfg);
  auto b = RunSearch(cfg);
  EXPECT_EQ(a.trials.size(), 10u);
  EXPECT_EQ(Pairs(a.outcomes), Pairs(b.outcomes));
  EXPECT_EQ(a.total_units, b.total_units);
  uint64_t sum = 0;
  int64_t count = 0;
  for (const auto& lc : a.outcomes) {
    sum += lc.length * static_cast<uint64_t>(lc.count);
    count += lc.count;
    EXPECT_TRUE(lc.length == 100 || lc.length == 300 || lc.length == 900) << lc.length;
  }
  EXPECT_EQ(sum, a.total_units);
  EXPECT_EQ(count, 10);
}

// Creation-order trial records carry request ids, hparams and lengths.
TEST(SimulateTest, TrialRecords) {
  auto r = RunSearch(Config("{name: async_halving, metric: loss, num_rungs: 2, "
                      "max_length: {batches: 40}, divisor: 2, max_trials: 4}"));
  ASSERT_EQ(r.trials.size(), 4u);
  for (const auto& t : r.trials) {
    EXPECT_EQ(t.request_id.size(), 36u);
    EXPECT_TRUE(t.hparams.contains("x"));
    ASSERT_FALSE(t.lengths.empty());
    EXPECT_EQ(t.lengths.front(), 20u);
  }
}

// A searcher error surfaces as the Simulate status.
TEST(SimulateTest, BadConfigIsAnError) {
  auto cfg = Config("{name: async_halving, metric: loss, num_rungs: 2, "
                    "max_length: {batches: 40}, max_trials: 4}");
  cfg.defaulted["searcher"].erase("num_rungs");  // the parser rejects this too
  auto r = Simulate(cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("searcher.num_rungs"), std::string::npos);
}

}  // namespace
}  // namespace det::master::searcher
