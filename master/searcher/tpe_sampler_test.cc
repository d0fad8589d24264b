// `sampler: tpe` inside the ASHA searchers: new trials drawn from a model of the longest rung
// with enough metrics; rungs and promotions as with random sampling.
#include "master/searcher/tpe_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "master/searcher/searcher.h"

namespace det::master::searcher {
namespace {

using nlohmann::json;

config::ExperimentConfig Config(const std::string& searcher, int seed) {
  std::string yaml = "entrypoint: m:T\nreproducibility: {experiment_seed: " + std::to_string(seed) +
                     "}\nhyperparameters:\n"
                     "  x: {type: double, minval: 0, maxval: 10}\n"
                     "  y: {type: double, minval: 0, maxval: 10}\n"
                     "searcher: " +
                     searcher + "\n";
  auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return cfg.ok() ? *cfg : config::ExperimentConfig{};
}

struct Outcome {
  std::vector<std::string> events;  // every create (with hparams) and operation, in order
  double best_final = INFINITY;     // the best metric at the longest length reached
  uint64_t total_length = 0;        // what every trial trained, summed
};

// One operation at a time, oldest first; metric = f(hparams) + 1 / length (a learning curve
// that ranks trials the same at every rung). `restore_after` > 0 snapshots and restores the
// searcher after that many operations.
Outcome RunAsha(const config::ExperimentConfig& cfg, int restore_after = 0) {
  auto f = [](const json& h) {
    return std::pow(h["x"].get<double>() - 7, 2) + std::pow(h["y"].get<double>() - 2, 2);
  };
  Outcome out;
  auto made = Searcher::Create(cfg);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Searcher> s = std::move(made).value();
  std::map<std::string, json> hparams;
  std::map<std::string, uint64_t> trained;
  std::deque<std::pair<std::string, uint64_t>> ops;
  std::deque<std::string> closed;
  uint64_t top = 0;
  std::function<void(std::vector<Action>)> take = [&](std::vector<Action> actions) {
    for (Action& a : actions) {
      if (auto* c = std::get_if<CreateAction>(&a)) {
        hparams[c->request_id] = c->hparams;
        out.events.push_back("create " + c->hparams.dump());
        take(s->TrialCreated(c->request_id));
      } else if (auto* v = std::get_if<ValidateAfterAction>(&a)) {
        ops.emplace_back(v->request_id, v->length);
        top = std::max(top, v->length);
      } else if (auto* cl = std::get_if<CloseAction>(&a)) {
        closed.push_back(cl->request_id);
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
    out.total_length += length - trained[rid];
    trained[rid] = length;
    double metric = f(hparams[rid]) + 1.0 / static_cast<double>(length);
    out.events.push_back("op " + rid + " " + std::to_string(length));
    if (length == top) out.best_final = std::min(out.best_final, metric - 1.0 / length);
    auto r = s->ValidationCompleted(rid, metric, length);
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

constexpr char kAsha[] =
    "{name: async_halving, metric: loss, num_rungs: 3, divisor: 3, max_trials: 60, "
    "max_length: {batches: 27}, max_concurrent_trials: 1";

TEST(TpeSamplerTest, RandomSamplingIsTheDefaultAndUnchanged) {
  Outcome plain = RunAsha(Config(std::string(kAsha) + "}", 3));
  Outcome named = RunAsha(Config(std::string(kAsha) + ", sampler: random}", 3));
  EXPECT_EQ(plain.events, named.events);
  auto s = Searcher::Create(Config(std::string(kAsha) + "}", 3));
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE((*s)->Snapshot().contains("sampler"));
}

TEST(TpeSamplerTest, DrawsAsRandomUntilARungHasEnoughMetricsThenModels) {
  Outcome random = RunAsha(Config(std::string(kAsha) + "}", 3));
  Outcome tpe = RunAsha(Config(std::string(kAsha) + ", sampler: tpe, n_startup_trials: 8}", 3));
  auto creates = [](const Outcome& o) {
    std::vector<std::string> c;
    for (const std::string& e : o.events) {
      if (e.rfind("create ", 0) == 0) c.push_back(e);
    }
    return c;
  };
  std::vector<std::string> a = creates(random), b = creates(tpe);
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(b.size(), 60u);
  // When the k-th trial is created at most k - 1 trials have a metric at any length, so the
  // first 8 are random search's own draws; the model takes over after that.
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(a[i], b[i]) << i;
  EXPECT_NE(a, b);
}

// Promotions depend on the metrics: better newcomers are promoted more often, so a tpe search
// of 60 trials trains more in all than a random one. Random sampling gets 100 trials here, at
// least as much training in all, and tpe still finds the better trials.
TEST(TpeSamplerTest, FindsBetterTrialsThanRandomSamplingWithNoMoreTraining) {
  std::string random_asha = kAsha;
  random_asha.replace(random_asha.find("max_trials: 60"), 14, "max_trials: 100");
  double random = 0, tpe = 0;
  uint64_t random_total = 0, tpe_total = 0;
  for (int seed = 1; seed <= 5; ++seed) {
    Outcome r = RunAsha(Config(random_asha + "}", seed));
    Outcome t = RunAsha(Config(std::string(kAsha) + ", sampler: tpe}", seed));
    random += r.best_final / 5;
    tpe += t.best_final / 5;
    random_total += r.total_length;
    tpe_total += t.total_length;
  }
  EXPECT_GE(random_total, tpe_total);
  EXPECT_LT(tpe, random);
}

TEST(TpeSamplerTest, ARestoredSearchGoesOnExactlyAsTheOriginal) {
  config::ExperimentConfig cfg =
      Config(std::string(kAsha) + ", sampler: tpe, n_startup_trials: 5}", 4);
  Outcome straight = RunAsha(cfg);
  Outcome restored = RunAsha(cfg, /*restore_after=*/20);
  EXPECT_EQ(straight.events, restored.events);
}

TEST(TpeSamplerTest, ConfigErrorsNameTheField) {
  std::string yaml =
      "entrypoint: m:T\nhyperparameters: {x: {type: double, minval: 0, maxval: 1}}"
      "\nsearcher: " +
      std::string(kAsha) + ", sampler: bohb}\n";
  auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("searcher.sampler"), std::string::npos)
      << cfg.status().message();
  yaml =
      "entrypoint: m:T\nsearcher: {name: random, metric: loss, max_trials: 2, "
      "max_length: {batches: 1}, sampler: tpe}\n";
  cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("searcher.sampler"), std::string::npos)
      << cfg.status().message();
}

}  // namespace
}  // namespace det::master::searcher
