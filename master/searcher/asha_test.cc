// ASHA (promotion and stop based), tournaments and the 0.38 metrics event: the reference §4.1
// and §4.2 scenarios with their expected shapes.
#include <memory>

#include <gtest/gtest.h>

#include "master/searcher/searcher.h"
#include "master/searcher/searcher_test_util.h"
#include "master/searcher/simulate.h"

namespace det::master::searcher {
namespace {

using nlohmann::json;
using testing::Config;
using testing::Lengths;
using testing::PerTrial;
using testing::RunSearch;
using testing::Shapes;
using U64s = std::vector<uint64_t>;

// The §4.1 harness metric: one global value that grows by 1 per report (worsening).
std::function<double(int64_t, int64_t)> Worsening() {
  auto value = std::make_shared<double>(0);
  return [value](int64_t, int64_t) { return (*value)++; };
}

std::vector<uint64_t> Every(uint64_t period, uint64_t max) {
  std::vector<uint64_t> out;
  for (uint64_t t = 0; t <= max; t += period) out.push_back(t);
  return out;
}

std::vector<double> Hundredths(int n) {
  std::vector<double> v;
  for (int i = 1; i <= n; ++i) v.push_back(i / 100.0);
  return v;
}

// §4.1 ASHA stop search: R=3, max_time 900, d=3, 10 trials, mct 3, worsening metric reported
// every 100 -> 1 trial stopped at 900, 9 at 100.
TEST(AshaStoppingTest, TimeModeStopSearch) {
  auto cfg = Config("{name: async_halving, metric: loss, num_rungs: 3, max_time: 900, "
                    "time_metric: batches, divisor: 3, max_trials: 10, "
                    "max_concurrent_trials: 3}");
  SimulateOptions o;
  o.metric_fn = Worsening();
  o.report_points = Every(100, 900);
  auto r = RunSearch(cfg, o);
  EXPECT_EQ(r.trials.size(), 10u);
  EXPECT_EQ(r.Shapes(), (Shapes{{"900", 1}, {"100", 9}}));
}

// §4.1 tournament: max_time 90, d=3, max_rungs 5, 9 trials, mct 3, standard -> brackets with
// rungs [10,30,90] (6 trials: 5@10, 1@90) and [30,90] (3 trials: 2@30, 1@90).
TEST(AshaStoppingTest, TimeModeTournament) {
  auto cfg = Config("{name: adaptive_asha, metric: loss, max_time: 90, time_metric: batches, "
                    "divisor: 3, max_rungs: 5, max_trials: 9, max_concurrent_trials: 3, "
                    "mode: standard}");
  SimulateOptions o;
  o.metric_fn = Worsening();
  o.report_points = Every(10, 90);
  auto r = RunSearch(cfg, o);
  EXPECT_EQ(r.trials.size(), 9u);
  EXPECT_EQ(r.Shapes(), (Shapes{{"10", 5}, {"30", 2}, {"90", 2}}));
}

// §4.1 doEarlyStopping (rungs 1/3/9, d=3): a first report passes rung 0 silently, a better one
// too, a worse third one is stopped. Stop is a Close action.
TEST(AshaStoppingTest, MetricsReportedDecisions) {
  auto cfg = Config("{name: async_halving, metric: loss, num_rungs: 3, max_time: 9, "
                    "time_metric: batches, divisor: 3, max_trials: 3, "
                    "max_concurrent_trials: 3}");
  auto s = std::move(Searcher::Create(cfg)).value();
  std::vector<std::string> ids;
  for (const Action& a : s->InitialOperations()) {
    ids.push_back(std::get<CreateAction>(a).request_id);
    EXPECT_TRUE(s->TrialCreated(ids.back()).empty());  // no ops in time mode
  }
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_TRUE(s->ValidationMetricsReported(ids[0], {{"loss", .5}, {"batches", 1}})->empty());
  EXPECT_TRUE(s->ValidationMetricsReported(ids[1], {{"loss", .4}, {"batches", 1}})->empty());
  auto third = s->ValidationMetricsReported(ids[2], {{"loss", .6}, {"batches", 1}});
  ASSERT_TRUE(third.ok());
  ASSERT_EQ(third->size(), 1u);
  EXPECT_EQ(std::get<CloseAction>((*third)[0]).request_id, ids[2]);
  // A stopped trial's later reports are ignored.
  EXPECT_TRUE(s->ValidationMetricsReported(ids[2], {{"loss", .1}, {"batches", 9}})->empty());
  // Missing metric / time metric are errors.
  auto missing = s->ValidationMetricsReported(ids[0], {{"batches", 3}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("error parsing searcher metric"), std::string::npos);
  EXPECT_FALSE(s->ValidationMetricsReported(ids[0], {{"loss", 1.0}}).ok());
  // One report can pass several rungs: the best trial at t = 9 goes straight to the top.
  auto top = s->ValidationMetricsReported(ids[1], {{"loss", .1}, {"batches", 9}});
  ASSERT_TRUE(top.ok());
  ASSERT_FALSE(top->empty());
  EXPECT_EQ(std::get<CloseAction>((*top)[0]).request_id, ids[1]);
}

// Larger-is-better metrics are negated: the higher value continues.
TEST(AshaStoppingTest, LargerIsBetter) {
  auto cfg = Config("{name: async_halving, metric: acc, smaller_is_better: false, num_rungs: 2, "
                    "max_time: 4, time_metric: batches, divisor: 2, max_trials: 2}");
  auto s = std::move(Searcher::Create(cfg)).value();
  std::vector<std::string> ids;
  for (const Action& a : s->InitialOperations()) ids.push_back(std::get<CreateAction>(a).request_id);
  EXPECT_TRUE(s->ValidationMetricsReported(ids[0], {{"acc", .5}, {"batches", 2}})->empty());
  auto worse = *s->ValidationMetricsReported(ids[1], {{"acc", .4}, {"batches", 2}});
  ASSERT_EQ(worse.size(), 1u);
  EXPECT_EQ(std::get<CloseAction>(worse[0]).request_id, ids[1]);
}

// Other searchers ignore the 0.38 event.
TEST(AshaStoppingTest, OperationsSearchersIgnoreMetricsEvent) {
  auto cfg = Config("{name: random, metric: loss, max_trials: 1, max_length: {batches: 10}}");
  auto s = std::move(Searcher::Create(cfg)).value();
  auto id = std::get<CreateAction>(s->InitialOperations()[0]).request_id;
  auto r = s->ValidationMetricsReported(id, {{"loss", 1}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

constexpr char kPromotion[] =
    "{name: async_halving, metric: loss, num_rungs: 3, max_length: {batches: 9000}, "
    "divisor: 3, max_trials: 12";

// §4.2 promotion ASHA, constant metric: 8 x [1000], 3 x [1000,3000], 1 x [1000,3000,9000],
// in FIFO and in random trial order.
TEST(AshaPromotionTest, ConstantMetricShapes) {
  Shapes expected{{"1000", 8}, {"1000 3000", 3}, {"1000 3000 9000", 1}};
  for (uint32_t order : {0u, 1u, 7u, 42u}) {
    SimulateOptions o;
    o.metric = SimulatedMetric::kConstant;
    o.order_seed = order;
    auto r = RunSearch(Config(std::string(kPromotion) + "}"), o);
    EXPECT_EQ(r.Shapes(), expected) << "order seed " << order;
    EXPECT_EQ(r.idle_exits, 0);
  }
}

// Same in records and epochs (the searcher works in max_length's unit).
TEST(AshaPromotionTest, ConstantMetricInRecordsAndEpochs) {
  SimulateOptions o;
  o.metric = SimulatedMetric::kConstant;
  auto records = RunSearch(Config("{name: async_halving, metric: loss, num_rungs: 3, "
                            "max_length: {records: 576000}, divisor: 3, max_trials: 12}"),
                     o);
  EXPECT_EQ(records.Shapes(), (Shapes{{"64000", 8}, {"64000 192000", 3},
                                      {"64000 192000 576000", 1}}));
  auto epochs = RunSearch(Config("{name: async_halving, metric: loss, num_rungs: 3, "
                           "max_length: {epochs: 12}, divisor: 3, max_trials: 12}"),
                    o);
  EXPECT_EQ(epochs.Shapes(), (Shapes{{"1", 8}, {"1 4", 3}, {"1 4 12", 1}}));
}

// §4.2 metric runs: .01...12 smaller-better; the same reversed larger-better; an early exit of
// trial 3 at 3000 changes nothing.
TEST(AshaPromotionTest, ValueRuns) {
  std::vector<std::vector<uint64_t>> expected(12, U64s{1000});
  expected[0] = {1000, 3000, 9000};
  for (int i = 1; i <= 3; ++i) expected[i] = {1000, 3000};

  SimulateOptions o;
  o.metric_fn = PerTrial(Hundredths(12));
  EXPECT_EQ(Lengths(RunSearch(Config(std::string(kPromotion) + "}"), o)), expected);

  std::vector<double> reversed;
  for (int i = 12; i >= 1; --i) reversed.push_back(i / 100.0);
  SimulateOptions larger;
  larger.metric_fn = PerTrial(reversed);
  EXPECT_EQ(Lengths(RunSearch(Config(std::string(kPromotion) + ", smaller_is_better: false}"), larger)),
            expected);

  SimulateOptions exit = o;
  exit.exit_fn = [](int64_t i, uint64_t length) -> std::optional<ExitedReason> {
    if (i == 2 && length == 3000) return ExitedReason::kErrored;
    return std::nullopt;
  };
  auto r = RunSearch(Config(std::string(kPromotion) + "}"), exit);
  EXPECT_EQ(Lengths(r), expected);
  EXPECT_TRUE(r.trials[2].exited_early);
  EXPECT_FALSE(r.shutdown->failure);
}

// §4.2 async promotions: .10, .11, .12 (exits), then better ones: trial 1 still reaches 3000.
TEST(AshaPromotionTest, AsyncPromotionKeepsEarlyLeader) {
  SimulateOptions o;
  o.metric_fn = PerTrial({.10, .11, .12, .01, .02, .03, .04, .05, .06, .07, .08, .09});
  o.exit_fn = [](int64_t i, uint64_t) -> std::optional<ExitedReason> {
    if (i == 2) return ExitedReason::kErrored;
    return std::nullopt;
  };
  auto r = RunSearch(Config(std::string(kPromotion) + "}"), o);
  ASSERT_GE(r.trials[0].lengths.size(), 2u);
  EXPECT_EQ(r.trials[0].lengths[1], 3000u);
}

// §4.2: R=1, max_trials 4 -> 4 x [9000].
TEST(AshaPromotionTest, SingleRung) {
  auto r = RunSearch(Config("{name: async_halving, metric: loss, num_rungs: 1, "
                      "max_length: {batches: 9000}, divisor: 3, max_trials: 4}"));
  EXPECT_EQ(r.Shapes(), (Shapes{{"9000", 4}}));
}

// InvalidHP: the trial leaves the rungs and is replaced, so max_trials valid trials still run.
TEST(AshaPromotionTest, InvalidHpIsReplaced) {
  SimulateOptions o;
  o.metric = SimulatedMetric::kConstant;
  o.exit_fn = [](int64_t i, uint64_t) -> std::optional<ExitedReason> {
    if (i == 1 || i == 5) return ExitedReason::kInvalidHp;
    return std::nullopt;
  };
  auto r = RunSearch(Config(std::string(kPromotion) + "}"), o);
  EXPECT_EQ(r.trials.size(), 14u);
  auto shapes = r.Shapes();
  EXPECT_EQ(shapes["1000 3000 9000"], 1);
  EXPECT_EQ(shapes["1000 3000"], 3);
  EXPECT_EQ(shapes["1000"], 10);  // 8 + the 2 invalid ones
}

constexpr char kStopOnce[] =
    "{name: async_halving, metric: loss, num_rungs: 3, max_length: {batches: 9000}, "
    "divisor: 3, max_trials: 12, max_concurrent_trials: 2, stop_once: true";

// §4.2 stop-once: metric = trial id (later worse) -> 1 x [1000,3000,9000] + 11 x [1000].
TEST(AshaStopOnceTest, TrialIndexMetric) {
  SimulateOptions o;
  o.metric = SimulatedMetric::kTrialIndex;
  auto r = RunSearch(Config(std::string(kStopOnce) + "}"), o);
  EXPECT_EQ(r.Shapes(), (Shapes{{"1000 3000 9000", 1}, {"1000", 11}}));
}

// §4.2 stop-once value runs.
TEST(AshaStopOnceTest, ValueRuns) {
  SimulateOptions o;
  o.metric_fn = PerTrial(Hundredths(12));
  auto smaller = RunSearch(Config(std::string(kStopOnce) + "}"), o);
  EXPECT_EQ(smaller.trials[0].lengths, (U64s{1000, 3000, 9000}));
  for (size_t i = 1; i < smaller.trials.size(); ++i) {
    EXPECT_EQ(smaller.trials[i].lengths, (U64s{1000}));
  }
  auto larger = RunSearch(Config(std::string(kStopOnce) + ", smaller_is_better: false}"), o);
  EXPECT_EQ(larger.Shapes(), (Shapes{{"1000 3000 9000", 12}}));

  SimulateOptions ties;
  ties.metric_fn = PerTrial({.01, .02, .03, .04, .01, .02, .03, .04, .01, .02, .03, .04});
  auto r = RunSearch(Config(std::string(kStopOnce) + "}"), ties);
  ASSERT_EQ(r.trials.size(), 12u);
  for (size_t i = 0; i < 12; ++i) {
    if (i % 4 == 0) {
      EXPECT_EQ(r.trials[i].lengths, (U64s{1000, 3000, 9000})) << i;
    } else {
      EXPECT_EQ(r.trials[i].lengths, (U64s{1000})) << i;
    }
  }
}

// §4.2 adaptive_asha (operations era): max_length 900, 5 trials, standard, max_rungs 2, d=3 ->
// brackets (2 rungs, 3 trials) and (1 rung, 2 trials).
TEST(AdaptiveAshaTest, PromotionAndStopOnceBrackets) {
  std::string base = "{name: adaptive_asha, metric: loss, max_length: {batches: 900}, "
                     "max_trials: 5, mode: standard, max_rungs: 2, divisor: 3";
  SimulateOptions o;
  o.metric_fn = PerTrial({.1, .2, .3, .4, .5});
  auto r = RunSearch(Config(base + "}"), o);
  EXPECT_EQ(Lengths(r), (std::vector<U64s>{{300, 900}, {300}, {300}, {900}, {900}}));

  SimulateOptions s;
  s.metric_fn = PerTrial({.1, .2, .3, .4, .5});
  auto stop = RunSearch(Config(base + ", stop_once: true, smaller_is_better: false}"), s);
  EXPECT_EQ(Lengths(stop),
            (std::vector<U64s>{{300, 900}, {300, 900}, {300, 900}, {900}, {900}}));
}

// §4.2 tournament of two ASHA(R=3, 9000, 3 trials, d=3): the best of each reaches 3000 and is
// closed out there; the others stop at 1000.
TEST(AdaptiveAshaTest, TournamentOfTwoPromotionSearches) {
  SimulateOptions o;
  o.metric = SimulatedMetric::kTrialIndex;
  auto r = RunSearch(Config("{name: adaptive_asha, metric: loss, max_length: {batches: 9000}, "
                      "max_trials: 6, divisor: 3, bracket_rungs: [3, 3]}"),
               o);
  EXPECT_EQ(Lengths(r), (std::vector<U64s>{{1000, 3000}, {1000}, {1000},
                                            {1000, 3000}, {1000}, {1000}}));
}

// Never more than max_trials trials and never past max_length (default mode, several seeds).
TEST(AdaptiveAshaTest, DefaultSearchRespectsLimits) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SimulateOptions o;
    o.order_seed = seed;
    auto r = RunSearch(Config("{name: adaptive_asha, metric: loss, max_length: {batches: 1000}, "
                        "max_trials: 40}",
                        seed),
                 o);
    EXPECT_LE(r.trials.size(), 40u);
    EXPECT_GE(r.trials.size(), 38u);
    for (const auto& t : r.trials) {
      for (uint64_t l : t.lengths) EXPECT_LE(l, 1000u);
    }
  }
}

}  // namespace
}  // namespace det::master::searcher
