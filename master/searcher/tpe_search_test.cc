// The TPE searcher and its Parzen estimators.
#include "master/searcher/tpe_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "master/searcher/parzen_estimator.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {
namespace {

using nlohmann::json;

config::ExperimentConfig Config(const std::string& searcher, const std::string& hparams,
                                int seed = 7) {
  std::string yaml =
      "entrypoint: model_def:Trial\nreproducibility: {experiment_seed: " + std::to_string(seed) +
      "}\nhyperparameters:\n" + hparams + "searcher: " + searcher + "\n";
  auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return cfg.ok() ? *cfg : config::ExperimentConfig{};
}

constexpr char kX[] = "  x: {type: double, minval: 0, maxval: 10}\n";

struct SearchRun {
  std::vector<json> hparams;  // in creation order
  std::vector<double> metrics;
};

// Runs the search to the end, one trial at a time in creation order, each validating with
// objective(hparams); `restore_after` > 0 snapshots and restores the searcher after that many
// trials (as a master restart does).
SearchRun RunSearch(const config::ExperimentConfig& cfg,
                    const std::function<double(const json&)>& f, int restore_after = 0) {
  SearchRun run;
  auto made = Searcher::Create(cfg);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Searcher> s = std::move(made).value();
  std::deque<Action> queue;
  for (Action& a : s->InitialOperations()) queue.push_back(a);
  std::map<std::string, json> hparams;
  std::deque<std::string> created;
  bool shutdown = false;
  while (!shutdown && (!queue.empty() || !created.empty())) {
    while (!queue.empty()) {
      Action a = queue.front();
      queue.pop_front();
      if (auto* c = std::get_if<CreateAction>(&a)) {
        hparams[c->request_id] = c->hparams;
        created.push_back(c->request_id);
        for (Action& b : s->TrialCreated(c->request_id)) queue.push_back(b);
      } else if (std::holds_alternative<ShutdownAction>(a)) {
        shutdown = true;
      }
    }
    if (created.empty()) break;
    std::string rid = created.front();
    created.pop_front();
    double metric = f(hparams[rid]);
    run.hparams.push_back(hparams[rid]);
    run.metrics.push_back(metric);
    auto done = s->ValidationCompleted(rid, metric, 100);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    for (Action& b : *done) queue.push_back(b);
    for (Action& b : s->TrialExited(rid)) queue.push_back(b);
    if (restore_after > 0 && static_cast<int>(run.metrics.size()) == restore_after) {
      std::string text = s->Snapshot().dump();
      auto back = Searcher::Restore(cfg, json::parse(text));
      EXPECT_TRUE(back.ok()) << back.status().ToString();
      s = std::move(back).value();
      EXPECT_EQ(s->Snapshot().dump(), text);
    }
  }
  return run;
}

TEST(ParzenTest, ObservationWeightsRampOnlyPast25) {
  EXPECT_EQ(TpeObservationWeights(3), std::vector<double>(3, 1.0));
  std::vector<double> w = TpeObservationWeights(30);
  ASSERT_EQ(w.size(), 30u);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 30);
  EXPECT_LT(w[3], w[4]);
  EXPECT_DOUBLE_EQ(w[5], 1.0);
  EXPECT_DOUBLE_EQ(w[29], 1.0);
}

TEST(ParzenTest, BandwidthsAreNeighbourGapsClippedAndThePriorSpansTheRange) {
  NumericParzen p({0.2, 0.4}, {1, 1}, 0, 1, ParzenOptions{});
  // Sorted with the prior: 0.2, 0.4, 0.5; gaps 0.2 and 0.2, clipped up to 1 / min(100, 4).
  ASSERT_EQ(p.sigmas().size(), 3u);
  EXPECT_DOUBLE_EQ(p.sigmas()[0], 0.25);
  EXPECT_DOUBLE_EQ(p.sigmas()[1], 0.25);
  EXPECT_DOUBLE_EQ(p.sigmas()[2], 1.0);
  EXPECT_DOUBLE_EQ(p.mus()[2], 0.5);
  EXPECT_NEAR(p.weights()[0] + p.weights()[1] + p.weights()[2], 1.0, 1e-12);
}

TEST(ParzenTest, DensityIntegratesToOneOverTheRange) {
  NumericParzen p({1.0, 1.5, 8.0}, {1, 1, 1}, 0, 10, ParzenOptions{});
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) sum += std::exp(p.LogPdf((i + 0.5) * 10.0 / n)) * 10.0 / n;
  EXPECT_NEAR(sum, 1.0, 1e-3);
  EXPECT_NEAR(p.LogMass(0, 10), 0.0, 1e-9);
  EXPECT_GT(p.LogPdf(1.2), p.LogPdf(5.0));  // mass sits near the observations
  NpRand rng(3);
  for (int i = 0; i < 1000; ++i) {
    double x = p.Sample(rng);
    ASSERT_GE(x, 0);
    ASSERT_LE(x, 10);
  }
}

TEST(ParzenTest, CategoricalFavoursObservedChoices) {
  CategoricalParzen p({2, 2, 0}, {1, 1, 1}, 4, ParzenOptions{});
  double total = 0;
  for (double q : p.probabilities()) total += q;
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_GT(p.LogPmf(2), p.LogPmf(0));
  EXPECT_GT(p.LogPmf(0), p.LogPmf(1));
  EXPECT_DOUBLE_EQ(p.LogPmf(1), p.LogPmf(3));
}

TEST(TpeSearchTest, StartupTrialsAreDrawnAsRandomSearchDrawsThem) {
  std::string fields =
      ", metric: loss, max_trials: 8, max_length: {batches: 100}, max_concurrent_trials: 4}";
  auto random = Searcher::Create(Config("{name: random" + fields, kX));
  auto tpe = Searcher::Create(Config("{name: tpe" + fields, kX));
  ASSERT_TRUE(random.ok() && tpe.ok());
  std::vector<Action> a = (*random)->InitialOperations();
  std::vector<Action> b = (*tpe)->InitialOperations();
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::get<CreateAction>(a[i]).request_id, std::get<CreateAction>(b[i]).request_id);
    EXPECT_EQ(std::get<CreateAction>(a[i]).hparams, std::get<CreateAction>(b[i]).hparams);
  }
}

TEST(TpeSearchTest, LearnsWhereTheMinimumIs) {
  auto f = [](const json& h) { return std::pow(h["x"].get<double>() - 7.0, 2); };
  // After the 10 random start-up trials, suggestions gather near x = 7: the median distance of
  // the last 20 of 60 trials, averaged over 5 seeds, is far below a uniform draw's (2.5) and
  // below random search's in the same runs.
  auto tail_median = [](const SearchRun& r) {
    std::vector<double> d;
    for (size_t i = r.hparams.size() - 20; i < r.hparams.size(); ++i) {
      d.push_back(std::fabs(r.hparams[i]["x"].get<double>() - 7.0));
    }
    std::sort(d.begin(), d.end());
    return (d[9] + d[10]) / 2;
  };
  double tpe = 0, random = 0;
  for (int seed = 1; seed <= 5; ++seed) {
    std::string fields =
        ", metric: loss, max_trials: 60, max_concurrent_trials: 1, "
        "max_length: {batches: 100}}";
    SearchRun t = RunSearch(Config("{name: tpe" + fields, kX, seed), f);
    SearchRun r = RunSearch(Config("{name: random" + fields, kX, seed), f);
    ASSERT_EQ(t.metrics.size(), 60u);
    tpe += tail_median(t) / 5;
    random += tail_median(r) / 5;
  }
  EXPECT_LT(tpe, 1.0);
  EXPECT_LT(tpe, random / 2);
}

TEST(TpeSearchTest, MaximisesWhenLargerIsBetter) {
  auto f = [](const json& h) { return -std::pow(h["x"].get<double>() - 2.0, 2); };
  SearchRun run =
      RunSearch(Config("{name: tpe, metric: acc, smaller_is_better: false, max_trials: 50, "
                       "max_length: {batches: 100}}",
                       kX),
                f);
  double sum = 0;
  for (size_t i = 30; i < 50; ++i) sum += std::fabs(run.hparams[i]["x"].get<double>() - 2.0);
  EXPECT_LT(sum / 20, 1.0);
}

TEST(TpeSearchTest, ARestoredSearchSuggestsExactlyWhatTheOriginalWould) {
  auto f = [](const json& h) {
    return std::pow(h["x"].get<double>() - 3.0, 2) + (h["opt"] == "sgd" ? 1.0 : 0.0) +
           0.1 * h["layers"].get<double>();
  };
  std::string space = std::string(kX) +
                      "  opt: {type: categorical, vals: [adam, sgd]}\n"
                      "  layers: {type: int, minval: 1, maxval: 8}\n";
  config::ExperimentConfig cfg = Config(
      "{name: tpe, metric: loss, max_trials: 30, max_length: {batches: 100}, n_startup_trials: 5}",
      space);
  SearchRun straight = RunSearch(cfg, f);
  SearchRun restored = RunSearch(cfg, f, /*restore_after=*/12);
  ASSERT_EQ(straight.hparams.size(), 30u);
  EXPECT_EQ(straight.hparams, restored.hparams);
}

TEST(TpeSearchTest, EveryTypeStaysInItsSpace) {
  std::string space =
      "  lr: {type: log, minval: -4, maxval: -1, base: 10}\n"
      "  units: {type: int, minval: 4, maxval: 9}\n"
      "  act: {type: categorical, vals: [relu, tanh, 3]}\n"
      "  fixed: 5\n"
      "  group:\n"
      "    drop: {type: double, minval: 0.1, maxval: 0.5}\n";
  auto f = [](const json& h) {
    return std::fabs(std::log10(h["lr"].get<double>()) + 2.5) +
           std::fabs(h["units"].get<double>() - 6) + (h["act"] == "tanh" ? 0 : 1);
  };
  SearchRun run = RunSearch(Config("{name: tpe, metric: loss, max_trials: 40, max_length: "
                                   "{batches: 100}, n_startup_trials: 5, "
                                   "constant_liar: true}",
                                   space),
                            f);
  ASSERT_EQ(run.hparams.size(), 40u);
  for (const json& h : run.hparams) {
    double lr = h["lr"].get<double>();
    EXPECT_GE(lr, 1e-4 * (1 - 1e-12));
    EXPECT_LE(lr, 1e-1 * (1 + 1e-12));
    ASSERT_TRUE(h["units"].is_number_integer()) << h.dump();
    EXPECT_GE(h["units"].get<int64_t>(), 4);
    EXPECT_LE(h["units"].get<int64_t>(), 9);
    EXPECT_TRUE(h["act"] == "relu" || h["act"] == "tanh" || h["act"] == 3) << h.dump();
    EXPECT_EQ(h["fixed"], 5);
    double drop = h["group"]["drop"].get<double>();
    EXPECT_GE(drop, 0.1);
    EXPECT_LE(drop, 0.5);
  }
}

TEST(TpeSearchTest, ConfigErrorsNameTheField) {
  auto bad = [](const std::string& searcher) {
    std::string yaml =
        "entrypoint: m:T\nhyperparameters:\n" + std::string(kX) + "searcher: " + searcher + "\n";
    auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
    if (!cfg.ok()) return cfg.status().message();
    auto s = Searcher::Create(*cfg);
    return s.ok() ? std::string() : s.status().message();
  };
  EXPECT_NE(bad("{name: tpe, metric: loss, max_trials: 5}").find("searcher.max_length"),
            std::string::npos);
  EXPECT_NE(
      bad("{name: tpe, metric: loss, max_trials: 5, max_length: {batches: 10}, n_ei_candidates: 0}")
          .find("searcher.n_ei_candidates"),
      std::string::npos);
  // A candidate count that would hold the runtime loop for everyone is refused.
  EXPECT_NE(bad("{name: tpe, metric: loss, max_trials: 5, max_length: {batches: 10}, "
                "n_ei_candidates: 1000000000000}")
                .find("searcher.n_ei_candidates: must be <= 1024"),
            std::string::npos);
  EXPECT_NE(
      bad("{name: tpe, metric: loss, max_trials: 5, max_length: {batches: 10}, prior_weight: -1}")
          .find("searcher.prior_weight"),
      std::string::npos);
  EXPECT_NE(bad("{name: tpe, metric: loss, max_trials: 5, max_length: {batches: 10}, divisor: 3}")
                .find("searcher.divisor"),
            std::string::npos);
  config::ExperimentConfig ok =
      Config("{name: tpe, metric: loss, max_trials: 5, max_length: {batches: 10}}", kX);
  EXPECT_EQ(ok.defaulted["searcher"]["n_startup_trials"], 10);
  EXPECT_EQ(ok.defaulted["searcher"]["n_ei_candidates"], 24);
  EXPECT_EQ(ok.defaulted["searcher"]["constant_liar"], false);
}

}  // namespace
}  // namespace det::master::searcher

namespace det::master::searcher {
namespace {

// A search whose trials validate several times: one operation at a time, oldest first, metric
// f(hparams) + 10 / length (a learning curve that keeps the trials' order at every length).
struct StagedRun {
  std::vector<json> created;                // hparams, in creation order
  std::map<std::string, uint64_t> reached;  // request id -> longest length validated
  std::vector<std::string> events;
};

StagedRun RunStaged(const config::ExperimentConfig& cfg, int restore_after = 0) {
  auto f = [](const json& h) { return std::pow(h["x"].get<double>() - 7.0, 2); };
  StagedRun out;
  auto made = Searcher::Create(cfg);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Searcher> s = std::move(made).value();
  std::map<std::string, json> hparams;
  std::deque<std::pair<std::string, uint64_t>> ops;
  std::deque<std::string> closed;
  std::function<void(std::vector<Action>)> take = [&](std::vector<Action> actions) {
    for (Action& a : actions) {
      if (auto* c = std::get_if<CreateAction>(&a)) {
        hparams[c->request_id] = c->hparams;
        out.created.push_back(c->hparams);
        take(s->TrialCreated(c->request_id));
      } else if (auto* v = std::get_if<ValidateAfterAction>(&a)) {
        ops.emplace_back(v->request_id, v->length);
      } else if (auto* cl = std::get_if<CloseAction>(&a)) {
        closed.push_back(cl->request_id);
        out.events.push_back("close " + cl->request_id);
      }
    }
  };
  take(s->InitialOperations());
  int done = 0;
  while (!ops.empty() || !closed.empty()) {
    if (!closed.empty()) {
      std::string rid = closed.front();
      closed.pop_front();
      take(s->TrialExited(rid));
      continue;
    }
    auto [rid, length] = ops.front();
    ops.pop_front();
    out.reached[rid] = length;
    out.events.push_back("op " + rid + " " + std::to_string(length));
    auto r =
        s->ValidationCompleted(rid, f(hparams[rid]) + 10.0 / static_cast<double>(length), length);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    take(*r);
    if (++done == restore_after) {
      std::string text = s->Snapshot().dump();
      auto back = Searcher::Restore(cfg, json::parse(text));
      EXPECT_TRUE(back.ok()) << back.status().ToString();
      s = std::move(back).value();
      EXPECT_EQ(s->Snapshot().dump(), text);
    }
  }
  return out;
}

constexpr char kStopped[] =
    ", metric: loss, max_trials: 20, max_concurrent_trials: 1, max_length: {batches: 30}, "
    "stopping: {type: median, check_every: {batches: 10}, n_startup_trials: 3}}";

TEST(MedianStoppingTest, StopsTrialsWorseThanTheFinishedTrialsMedian) {
  StagedRun run = RunStaged(Config(std::string("{name: random") + kStopped, kX, 5));
  ASSERT_EQ(run.created.size(), 20u);
  int stopped = 0, finished = 0;
  for (const auto& [rid, length] : run.reached) {
    EXPECT_TRUE(length == 10 || length == 20 || length == 30) << length;
    stopped += length < 30;
    finished += length == 30;
  }
  EXPECT_GT(stopped, 0) << "a median rule that never stops anything";
  EXPECT_GE(finished, 3) << "the start-up trials always finish";
  // Random sampling with stopping draws exactly what random search draws.
  SearchRun plain =
      RunSearch(Config("{name: random, metric: loss, max_trials: 20, max_concurrent_trials: 1, "
                       "max_length: {batches: 100}}",
                       kX, 5),
                [](const json&) { return 0.0; });
  EXPECT_EQ(plain.hparams, run.created);
}

TEST(MedianStoppingTest, NothingIsStoppedBeforeTheStartUpTrialsFinishOrDuringTheWarmUp) {
  StagedRun warm = RunStaged(Config(
      "{name: random, metric: loss, max_trials: 12, max_concurrent_trials: 1, "
      "max_length: {batches: 30}, stopping: {check_every: {batches: 10}, n_startup_trials: 3, "
      "n_warmup_steps: 30}}",
      kX, 5));
  for (const auto& [rid, length] : warm.reached) EXPECT_EQ(length, 30u);
  StagedRun never =
      RunStaged(Config("{name: random, metric: loss, max_trials: 12, max_concurrent_trials: 1, "
                       "max_length: {batches: 30}, stopping: {check_every: {batches: 10}, "
                       "n_startup_trials: 50}}",
                       kX, 5));
  for (const auto& [rid, length] : never.reached) EXPECT_EQ(length, 30u);
}

TEST(MedianStoppingTest, TpeWithStoppingLearnsAndRestoresExactly) {
  config::ExperimentConfig cfg = Config(std::string("{name: tpe") + kStopped, kX, 6);
  StagedRun straight = RunStaged(cfg);
  StagedRun restored = RunStaged(cfg, /*restore_after=*/17);
  EXPECT_EQ(straight.events, restored.events);
  EXPECT_EQ(straight.created, restored.created);
  double tail = 0;
  for (size_t i = 10; i < 20; ++i) tail += std::fabs(straight.created[i]["x"].get<double>() - 7);
  EXPECT_LT(tail / 10, 2.5) << "modelled trials gather toward x = 7 (a uniform draw: 2.9)";
}

TEST(MedianStoppingTest, ConfigErrorsNameTheField) {
  auto bad = [](const std::string& stopping) {
    std::string yaml = "entrypoint: m:T\nhyperparameters:\n" + std::string(kX) +
                       "searcher: {name: random, metric: loss, max_trials: 3, "
                       "max_length: {batches: 30}, stopping: " +
                       stopping + "}\n";
    auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
    return cfg.ok() ? std::string() : cfg.status().message();
  };
  EXPECT_NE(bad("{type: median}").find("searcher.stopping.check_every"), std::string::npos);
  EXPECT_NE(bad("{type: mean, check_every: {batches: 5}}").find("searcher.stopping.type"),
            std::string::npos);
  EXPECT_NE(bad("{check_every: {epochs: 1}}").find("max_length's unit"), std::string::npos);
  EXPECT_NE(bad("{check_every: {batches: 5}, interval_steps: 0}")
                .find("searcher.stopping.interval_steps"),
            std::string::npos);
  EXPECT_NE(bad("{check_every: {batches: 5}, patience: 2}").find("searcher.stopping.patience"),
            std::string::npos);
  EXPECT_EQ(bad("{check_every: {batches: 5}, n_warmup_steps: 10}"), "");
}

}  // namespace
}  // namespace det::master::searcher
