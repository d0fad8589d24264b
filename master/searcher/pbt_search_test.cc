// PBT: the reference §4.3 shapes, parents and explore clamping.
#include "master/searcher/pbt_search.h"

#include <cmath>

#include <gtest/gtest.h>

#include "master/searcher/searcher_test_util.h"

namespace det::master::searcher {
namespace {

using config::Hyperparameter;
using config::Hyperparameters;
using nlohmann::json;
using testing::Config;
using testing::Lengths;
using testing::PerTrial;
using testing::RunSearch;
using testing::Shapes;
using U64s = std::vector<uint64_t>;

std::string Pbt(int pop, int rounds, int lpr, double trunc, bool smaller = true) {
  return "{name: pbt, metric: loss, population_size: " + std::to_string(pop) +
         ", num_rounds: " + std::to_string(rounds) + ", length_per_round: {batches: " +
         std::to_string(lpr) + "}, replace_function: {truncate_fraction: " +
         json(trunc).dump() +
         "}, explore_function: {resample_probability: 0.0, perturb_factor: 0.0}" +
         (smaller ? "" : ", smaller_is_better: false") + "}";
}

std::function<double(int64_t, int64_t)> TrialId() {
  return [](int64_t i, int64_t) { return static_cast<double>(i + 1); };
}

// §4.3 pop 2, rounds 2, LPR 200, trunc .5, larger-better -> [200,400], [200], [200].
TEST(PbtTest, TwoByTwo) {
  SimulateOptions o;
  o.metric_fn = TrialId();
  auto r = RunSearch(Config(Pbt(2, 2, 200, .5, false)), o);
  EXPECT_EQ(Lengths(r), (std::vector<U64s>{{200}, {200, 400}, {200}}));
  ASSERT_TRUE(r.trials[2].parent.has_value());
  EXPECT_EQ(*r.trials[2].parent, 1);  // the child starts from trial 2's checkpoint
  EXPECT_EQ(r.total_units, 200u + 400u + 200u);
}

// §4.3 pop 3, rounds 4, LPR 400, trunc 0 -> 3 x [400,800,1200,1600].
TEST(PbtTest, NoTruncation) {
  SimulateOptions o;
  o.metric_fn = TrialId();
  auto r = RunSearch(Config(Pbt(3, 4, 400, 0)), o);
  EXPECT_EQ(r.Shapes(), (Shapes{{"400 800 1200 1600", 3}}));
}

// §4.3 pop 2, rounds 3, LPR 1700, trunc .5, +id for odd and -id for even, larger-better.
TEST(PbtTest, AlternatingSigns) {
  SimulateOptions o;
  o.metric_fn = [](int64_t i, int64_t) {
    double id = static_cast<double>(i + 1);
    return (i + 1) % 2 == 1 ? id : -id;
  };
  auto r = RunSearch(Config(Pbt(2, 3, 1700, .5, false)), o);
  EXPECT_EQ(r.Shapes(), (Shapes{{"1700 3400", 2}, {"1700", 2}}));
}

// §4.3 pop 4, rounds 8, LPR 500, trunc .5.
TEST(PbtTest, FourByEight) {
  SimulateOptions o;
  o.metric_fn = TrialId();
  auto larger = RunSearch(Config(Pbt(4, 8, 500, .5, false)), o);
  EXPECT_EQ(larger.Shapes(), (Shapes{{"500 1000", 14}, {"500", 4}}));
  auto smaller = RunSearch(Config(Pbt(4, 8, 500, .5)), o);
  EXPECT_EQ(smaller.Shapes(),
            (Shapes{{"500 1000 1500 2000 2500 3000 3500 4000", 2}, {"500", 16}}));
  EXPECT_EQ(smaller.trials.size(), 18u);
}

// §4.3 value run: pop 2, rounds 4, LPR 200, metrics .5,.6,.1,.2,.3 (smaller better).
TEST(PbtTest, ValueRun) {
  SimulateOptions o;
  o.metric_fn = PerTrial({.5, .6, .1, .2, .3});
  auto r = RunSearch(Config(Pbt(2, 4, 200, .5)), o);
  EXPECT_EQ(Lengths(r),
            (std::vector<U64s>{{200, 400}, {200}, {200, 400, 600}, {200}, {200}}));
}

// Early exits count as the worst result; the search still finishes.
TEST(PbtTest, EarlyExitsFinish) {
  SimulateOptions o;
  o.metric_fn = TrialId();
  o.exit_fn = [](int64_t i, uint64_t) -> std::optional<ExitedReason> {
    if (i % 3 == 0) return ExitedReason::kErrored;
    return std::nullopt;
  };
  auto r = RunSearch(Config(Pbt(4, 5, 100, .25)), o);
  EXPECT_GT(r.trials.size(), 4u);
  for (const auto& t : r.trials) {
    for (uint64_t l : t.lengths) EXPECT_LE(l, 500u);
  }
}

Hyperparameters Space() {
  Hyperparameters hps;
  Hyperparameter i;
  i.type = Hyperparameter::Type::kInt;
  i.minval = 0;
  i.maxval = 100;
  Hyperparameter d = i;
  d.type = Hyperparameter::Type::kDouble;
  Hyperparameter l;
  l.type = Hyperparameter::Type::kLog;
  l.minval = -4;
  l.maxval = -2;
  l.base = 10;
  Hyperparameter c;
  c.type = Hyperparameter::Type::kCategorical;
  c.vals = {"a", "b", "c"};
  Hyperparameter k;
  k.val = 7;
  Hyperparameter n;
  n.type = Hyperparameter::Type::kNested;
  n.nested = {{"inner", i}};
  hps = {{"int", i}, {"double", d}, {"log", l}, {"cat", c}, {"const", k}, {"nested", n}};
  return hps;
}

// §4.3 explore: pf 0 & rp 0 -> unchanged; pf .5 -> cat/const/nested unchanged, numbers changed
// and within their ranges.
TEST(PbtTest, Explore) {
  json old{{"int", 50},  {"double", 50.0}, {"log", 1e-3},
           {"cat", "b"}, {"const", 7},     {"nested", {{"inner", 50}}}};
  NpRand rng(3);
  EXPECT_EQ(PbtExplore(Space(), old, 0, 0, rng), old);
  for (uint32_t seed = 0; seed < 50; ++seed) {
    NpRand r(seed);
    json out = PbtExplore(Space(), old, 0, .5, r);
    EXPECT_EQ(out["cat"], "b");
    EXPECT_EQ(out["const"], 7);
    EXPECT_EQ(out["nested"], old["nested"]);
    EXPECT_TRUE(out["int"] == 25 || out["int"] == 75) << out.dump();
    EXPECT_TRUE(out["double"] == 25.0 || out["double"] == 75.0) << out.dump();
    double lg = out["log"].get<double>();
    EXPECT_TRUE(std::fabs(lg - 5e-4) < 1e-12 || std::fabs(lg - 1.5e-3) < 1e-12) << lg;
  }
}

// Explore clamps: int floor/ceil then [minval, maxval]; log to [base^min, base^max].
TEST(PbtTest, ExploreClamps) {
  json old{{"int", 90}, {"double", 90.0}, {"log", 9e-3}, {"cat", "a"}, {"const", 7},
           {"nested", {{"inner", 1}}}};
  for (uint32_t seed = 0; seed < 50; ++seed) {
    NpRand r(seed);
    json out = PbtExplore(Space(), old, 0, .5, r);
    EXPECT_TRUE(out["int"] == 45 || out["int"] == 100) << out.dump();
    EXPECT_TRUE(out["double"] == 45.0 || out["double"] == 100.0) << out.dump();
    double lg = out["log"].get<double>();
    EXPECT_TRUE(std::fabs(lg - 4.5e-3) < 1e-12 || lg == std::pow(10.0, -2)) << lg;
  }
  // Odd ints: floor when decreasing, ceil when increasing.
  json odd{{"int", 7}};
  for (uint32_t seed = 0; seed < 20; ++seed) {
    NpRand r(seed);
    Hyperparameters only{{"int", Space()["int"]}};
    json out = PbtExplore(only, odd, 0, .5, r);
    EXPECT_TRUE(out["int"] == 3 || out["int"] == 11) << out.dump();
  }
  // Resampling always stays in range.
  for (uint32_t seed = 0; seed < 20; ++seed) {
    NpRand r(seed);
    json out = PbtExplore(Space(), old, 1, .5, r);
    EXPECT_GE(out["int"].get<int64_t>(), 0);
    EXPECT_LE(out["int"].get<int64_t>(), 100);
    EXPECT_GE(out["log"].get<double>(), 1e-4);
    EXPECT_LE(out["log"].get<double>(), 1e-2);
  }
}

// Children carry parent_request_id and a parent's explored hparams.
TEST(PbtTest, ChildrenNameTheirParents) {
  auto cfg = Config(
      "{name: pbt, metric: loss, population_size: 4, num_rounds: 3, "
      "length_per_round: {batches: 10}, replace_function: {truncate_fraction: 0.5}, "
      "explore_function: {resample_probability: 0.2, perturb_factor: 0.2}}",
      5, "  x: {type: double, minval: 0, maxval: 1}\n");
  SimulateOptions o;
  o.metric_fn = TrialId();
  auto r = RunSearch(cfg, o);
  EXPECT_EQ(r.trials.size(), 8u);
  for (size_t i = 4; i < r.trials.size(); ++i) {
    ASSERT_TRUE(r.trials[i].parent.has_value()) << i;
    EXPECT_LT(*r.trials[i].parent, static_cast<int64_t>(i));
    double x = r.trials[i].hparams["x"].get<double>();
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 1);
  }
}

// Missing required fields are errors that name the field.
TEST(PbtTest, RequiredFields) {
  // The config parser rejects this too; the searcher checks again for configs built otherwise.
  auto cfg = Config("{name: pbt, metric: loss, population_size: 4, num_rounds: 3, "
                    "length_per_round: {batches: 10}, replace_function: {truncate_fraction: 0.5}, "
                    "explore_function: {resample_probability: 0.0, perturb_factor: 0.0}}");
  cfg.defaulted["searcher"].erase("replace_function");
  auto s = Searcher::Create(cfg);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("replace_function.truncate_fraction"), std::string::npos);
}

}  // namespace
}  // namespace det::master::searcher
