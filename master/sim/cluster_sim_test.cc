// Seeded cluster simulations of every searcher. A failing seed replays with its trace:
//   DET_SIM_SEED=<seed> build/tests/master_cluster_sim_test --gtest_filter='*<Searcher>*'
// DET_SIM_SEEDS=<n> runs n seeds per searcher (make sim).
#include "master/sim/cluster_sim.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace det::master::sim {
namespace {

config::ExperimentConfig Config(const std::string& searcher) {
  std::string yaml =
      "entrypoint: model_def:Trial\nhyperparameters:\n"
      "  x: {type: int, minval: 0, maxval: 10, count: 3}\n"
      "  lr: {type: double, minval: 0.001, maxval: 0.1, count: 2}\n"
      "searcher: " +
      searcher + "\n";
  auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return cfg.ok() ? *cfg : config::ExperimentConfig{};
}

// The search of the lost promotion (issue #33), and one of each other kind.
constexpr char kAdaptiveAsha[] =
    "{name: adaptive_asha, metric: loss, max_trials: 9, max_length: {batches: 90}, divisor: 3, "
    "max_rungs: 3, mode: aggressive, max_concurrent_trials: 2}";
constexpr char kAsyncHalving[] =
    "{name: async_halving, metric: loss, num_rungs: 3, max_length: {batches: 90}, divisor: 3, "
    "max_trials: 12, max_concurrent_trials: 3}";
constexpr char kRandom[] =
    "{name: random, metric: loss, max_trials: 6, max_length: {batches: 20}, "
    "max_concurrent_trials: 2}";
constexpr char kGrid[] =
    "{name: grid, metric: loss, max_length: {batches: 20}, max_concurrent_trials: 2}";
constexpr char kPbt[] =
    "{name: pbt, metric: loss, population_size: 4, num_rounds: 3, "
    "length_per_round: {batches: 10}, replace_function: {truncate_fraction: 0.5}, "
    "explore_function: {resample_probability: 0.5, perturb_factor: 0.2}}";

constexpr char kTpe[] =
    "{name: tpe, metric: loss, max_trials: 8, max_length: {batches: 20}, "
    "max_concurrent_trials: 2, n_startup_trials: 3}";

int64_t Seeds() {
  const char* n = std::getenv("DET_SIM_SEEDS");
  return n != nullptr ? std::atoll(n) : 2000;
}

// Every seed (or the one in DET_SIM_SEED, with its trace printed) must keep every invariant.
// Several searchers are several experiments sharing the agent's slots.
void RunSeeds(std::vector<const char*> searchers, bool kill, int64_t seeds = Seeds()) {
  std::vector<config::ExperimentConfig> cfg;
  for (const char* s : searchers) cfg.push_back(Config(s));
  const char* one = std::getenv("DET_SIM_SEED");
  uint64_t first = one != nullptr ? std::strtoull(one, nullptr, 10) : 1;
  uint64_t last = one != nullptr ? first : first + static_cast<uint64_t>(seeds) - 1;
  int64_t finished = 0;
  for (uint64_t seed = first; seed <= last; ++seed) {
    ClusterSimOptions o;
    o.seed = seed;
    o.kill = kill && seed % 4 == 0;
    std::vector<std::string> trace;
    auto r = RunClusterSim(cfg, o, &trace);
    if (!r.ok() || one != nullptr) {
      std::string text;
      for (const std::string& line : trace) text += line + "\n";
      ASSERT_TRUE(r.ok()) << r.status().message() << "\nreplay: DET_SIM_SEED=" << seed
                          << " build/tests/master_cluster_sim_test\n"
                          << text;
      std::printf("%s", text.c_str());
    }
    for (const ClusterSimResult::Outcome& o : r->experiments) finished += !o.killed;
  }
  if (one == nullptr) {
    EXPECT_GT(finished, 0) << "every run was killed: nothing compared";
  }
}

TEST(ClusterSimTest, AdaptiveAsha) { RunSeeds({kAdaptiveAsha}, true); }
TEST(ClusterSimTest, AsyncHalving) { RunSeeds({kAsyncHalving}, true); }
TEST(ClusterSimTest, Random) { RunSeeds({kRandom}, true); }
TEST(ClusterSimTest, Grid) { RunSeeds({kGrid}, true); }
TEST(ClusterSimTest, Pbt) { RunSeeds({kPbt}, true); }
TEST(ClusterSimTest, Tpe) { RunSeeds({kTpe}, true, Seeds() / 2); }
TEST(ClusterSimTest, RandomWithMedianStopping) {
  RunSeeds({"{name: random, metric: loss, max_trials: 6, max_length: {batches: 20}, "
            "max_concurrent_trials: 2, stopping: {check_every: {batches: 5}, "
            "n_startup_trials: 2}}"},
           true, Seeds() / 4);
}
TEST(ClusterSimTest, AdaptiveAshaWithTheTpeSampler) {
  std::string asha = kAdaptiveAsha;
  asha.replace(asha.size() - 1, 1, ", sampler: tpe, n_startup_trials: 3}");
  RunSeeds({asha.c_str()}, true, Seeds() / 2);
}
// Two searches on one agent's two slots, each paused, activated and killed on its own.
TEST(ClusterSimTest, AdaptiveAshaAndPbtShareTheSlots) {
  RunSeeds({kAdaptiveAsha, kPbt}, true, Seeds() / 2);
}
TEST(ClusterSimTest, AsyncHalvingAndRandomShareTheSlots) {
  RunSeeds({kAsyncHalving, kRandom}, true, Seeds() / 2);
}

}  // namespace
}  // namespace det::master::sim
