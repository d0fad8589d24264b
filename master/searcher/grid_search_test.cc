#include "master/searcher/grid_search.h"

#include <set>

#include <gtest/gtest.h>

#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using config::Hyperparameter;
using config::Hyperparameters;
using nlohmann::json;
using testing::Config;
using testing::RunSearch;

Hyperparameter Int(double lo, double hi, int64_t count) {
  Hyperparameter hp;
  hp.type = Hyperparameter::Type::kInt;
  hp.minval = lo;
  hp.maxval = hi;
  hp.count = count;
  return hp;
}

Hyperparameter Double(double lo, double hi, int64_t count) {
  Hyperparameter hp = Int(lo, hi, count);
  hp.type = Hyperparameter::Type::kDouble;
  return hp;
}

Hyperparameter Log(double lo, double hi, double base, int64_t count) {
  Hyperparameter hp = Int(lo, hi, count);
  hp.type = Hyperparameter::Type::kLog;
  hp.base = base;
  return hp;
}

Hyperparameter Categorical(std::vector<json> vals) {
  Hyperparameter hp;
  hp.type = Hyperparameter::Type::kCategorical;
  hp.vals = std::move(vals);
  return hp;
}

Hyperparameter Const(json v) {
  Hyperparameter hp;
  hp.val = std::move(v);
  return hp;
}

Hyperparameter Nested(Hyperparameters children) {
  Hyperparameter hp;
  hp.type = Hyperparameter::Type::kNested;
  hp.nested = std::move(children);
  return hp;
}

std::vector<json> Points(const Hyperparameters& hps) {
  auto axes = GridAxes(hps);
  EXPECT_TRUE(axes.ok()) << axes.status().ToString();
  uint64_t size = *GridSize(*axes);
  std::vector<json> out;
  for (uint64_t i = 0; i < size; ++i) out.push_back(GridPoint(*axes, i));
  return out;
}

std::vector<json> AxisValues(const Hyperparameter& hp) {
  auto axes = GridAxes(Hyperparameters{{"x", hp}});
  EXPECT_TRUE(axes.ok());
  return (*axes)[0].values;
}

// The grid size is the product of the axis counts (reference §4.1).
TEST(GridSearchTest, SizesAreProducts) {
  std::vector<std::vector<int64_t>> cases = {{1}, {4}, {1, 4}, {3, 4}, {2, 3, 4},
                                             {2, 2, 3, 3, 4, 5}};
  std::vector<uint64_t> expected = {1, 4, 4, 12, 24, 720};
  for (size_t c = 0; c < cases.size(); ++c) {
    Hyperparameters hps;
    for (size_t i = 0; i < cases[c].size(); ++i) {
      hps["h" + std::to_string(i)] = Int(0, 100, cases[c][i]);
    }
    EXPECT_EQ(*GridSize(*GridAxes(hps)), expected[c]);
  }
}

// Axis values per type, including int clamping and rounding half away from zero.
TEST(GridSearchTest, AxisValues) {
  EXPECT_EQ(AxisValues(Double(0, 2, 5)), (std::vector<json>{0.0, 0.5, 1.0, 1.5, 2.0}));
  EXPECT_EQ(AxisValues(Int(0, 20, 7)), (std::vector<json>{0, 3, 7, 10, 13, 17, 20}));
  auto logs = AxisValues(Log(-3, -2, 10, 2));
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_DOUBLE_EQ(logs[0].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(logs[1].get<double>(), 0.01);
  EXPECT_EQ(AxisValues(Categorical({1, 2, 3})).size(), 3u);
  EXPECT_EQ(AxisValues(Const(7)), (std::vector<json>{7}));
  EXPECT_EQ(AxisValues(Int(0, 4, 5)), (std::vector<json>{0, 1, 2, 3, 4}));
  EXPECT_EQ(AxisValues(Int(-4, -2, 3)), (std::vector<json>{-4, -3, -2}));
  EXPECT_EQ(AxisValues(Int(0, 3, 10)), (std::vector<json>{0, 1, 2, 3}));  // clamped count
  EXPECT_EQ(AxisValues(Int(0, 3, 3)), (std::vector<json>{0, 2, 3}));      // 1.5 -> 2
  EXPECT_EQ(AxisValues(Int(-3, 0, 3)), (std::vector<json>{-3, -2, 0}));   // -1.5 -> -2
  EXPECT_EQ(AxisValues(Int(0, 3, 1)), (std::vector<json>{2}));
  EXPECT_EQ(AxisValues(Int(-3, 0, 1)), (std::vector<json>{-2}));
  EXPECT_EQ(AxisValues(Double(0, 3, 1)), (std::vector<json>{1.5}));
}

// The first axis varies slowest; nesting keeps the same order.
TEST(GridSearchTest, LexicographicOrder) {
  auto flat = Points({{"1", Int(0, 20, 3)}, {"2", Int(0, 10, 3)}});
  std::vector<std::pair<int, int>> expected = {{0, 0},  {0, 5},  {0, 10}, {10, 0}, {10, 5},
                                               {10, 10}, {20, 0}, {20, 5}, {20, 10}};
  ASSERT_EQ(flat.size(), expected.size());
  for (size_t i = 0; i < flat.size(); ++i) {
    EXPECT_EQ(flat[i]["1"], expected[i].first);
    EXPECT_EQ(flat[i]["2"], expected[i].second);
  }
  auto nested = Points({{"1", Int(0, 20, 3)}, {"2", Nested({{"3", Int(0, 10, 3)}})}});
  ASSERT_EQ(nested.size(), expected.size());
  for (size_t i = 0; i < nested.size(); ++i) {
    EXPECT_EQ(nested[i]["1"], expected[i].first);
    EXPECT_EQ(nested[i]["2"]["3"], expected[i].second);
  }
}

// Mixed nested space: 16 points with the expected value sets; an empty nested map survives.
TEST(GridSearchTest, MixedNestedAndEmptyMap) {
  Hyperparameters hps = {
      {"const", Const(2)},
      {"a", Nested({{"b", Nested({{"c1", Categorical({3, 5})}, {"c2", Int(7, 11, 2)}})}})},
      {"f", Double(13, 17, 2)},
      {"l", Log(1, 2, 10, 2)},
      {"e", Nested({})}};
  auto points = Points(hps);
  ASSERT_EQ(points.size(), 16u);
  std::set<double> l, f;
  std::set<int64_t> c2;
  for (const json& p : points) {
    l.insert(p["l"].get<double>());
    f.insert(p["f"].get<double>());
    c2.insert(p["a"]["b"]["c2"].get<int64_t>());
    EXPECT_EQ(p["const"], 2);
    EXPECT_EQ(p["e"], json::object());
  }
  EXPECT_EQ(l, (std::set<double>{10, 100}));
  EXPECT_EQ(f, (std::set<double>{13, 17}));
  EXPECT_EQ(c2, (std::set<int64_t>{7, 11}));
}

// int/double/log axes need a count under grid search.
TEST(GridSearchTest, MissingCountIsAnError) {
  Hyperparameter hp = Int(0, 3, 1);
  hp.count.reset();
  auto axes = GridAxes(Hyperparameters{{"x", hp}});
  ASSERT_FALSE(axes.ok());
  EXPECT_NE(axes.status().message().find("hyperparameters.x.count"), std::string::npos);
}

// Grid search int [0,3] c4, mct 2: 4 trials with every value, the LAST point first, none
// stopped early, each trained to max_length.
TEST(GridSearchTest, SearchCreatesEveryPointFromTheEnd) {
  auto cfg = Config("{name: grid, metric: loss, max_length: {batches: 300}, "
                    "max_concurrent_trials: 2}",
                    0, "  x: {type: int, minval: 0, maxval: 3, count: 4}\n");
  auto r = RunSearch(cfg);
  ASSERT_EQ(r.trials.size(), 4u);
  std::vector<int64_t> xs;
  for (const auto& t : r.trials) {
    xs.push_back(t.hparams["x"].get<int64_t>());
    EXPECT_EQ(t.lengths, (std::vector<uint64_t>{300}));
  }
  EXPECT_EQ(xs, (std::vector<int64_t>{3, 2, 1, 0}));
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].count, 4);
  EXPECT_EQ(r.outcomes[0].length, 300u);
}

// Concurrency: only max_concurrent_trials creates up front; exits create the rest.
TEST(GridSearchTest, RespectsMaxConcurrentTrials) {
  auto cfg = Config("{name: grid, metric: loss, max_length: {batches: 300}, "
                    "max_concurrent_trials: 2}",
                    0, "  x: {type: int, minval: 0, maxval: 10, count: 4}\n");
  auto s = Searcher::Create(cfg);
  ASSERT_TRUE(s.ok());
  auto initial = (*s)->InitialOperations();
  EXPECT_EQ(initial.size(), 2u);
  auto all = RunSearch(cfg);
  EXPECT_EQ(all.trials.size(), 4u);  // reference §4.1 Simulate: [{4 @ max_length}]
  ASSERT_EQ(all.outcomes.size(), 1u);
  EXPECT_EQ(all.outcomes[0].count, 4);
}

// Early exits are not replaced: the grid still yields each point once.
TEST(GridSearchTest, EarlyExitsAreNotReplaced) {
  auto cfg = Config("{name: grid, metric: loss, max_length: {batches: 100}}", 0,
                    "  x: {type: int, minval: 0, maxval: 4, count: 5}\n");
  SimulateOptions o;
  o.exit_fn = [](int64_t i, uint64_t) -> std::optional<ExitedReason> {
    if (i == 1) return ExitedReason::kInvalidHp;
    return std::nullopt;
  };
  auto r = RunSearch(cfg, o);
  EXPECT_EQ(r.trials.size(), 5u);
}

}  // namespace
}  // namespace det::master::searcher
