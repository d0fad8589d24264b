#include "master/searcher/hparam_sampling.h"

#include <cmath>

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"

namespace det::master::searcher {
namespace {

using config::Hyperparameter;
using config::Hyperparameters;
using nlohmann::json;

Hyperparameters ParseHps(const std::string& hps_yaml) {
  std::string yaml = "entrypoint: model_def:Trial\n"
                     "searcher: {name: random, metric: loss, max_trials: 1}\n"
                     "hyperparameters:\n" + hps_yaml;
  auto cfg = config::ParseExperimentConfig(yaml, {});
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return cfg.ok() ? cfg->hyperparameters : Hyperparameters{};
}

const char* kMixed =
    "  global_batch_size: 64\n"
    "  lr: {type: log, minval: -4, maxval: -2, base: 10}\n"
    "  dropout: {type: double, minval: 0.2, maxval: 0.5}\n"
    "  layers: {type: int, minval: 1, maxval: 4}\n"
    "  opt: {type: categorical, vals: [sgd, adam, {name: lamb}]}\n";

// Equal seeds give equal samples and leave the RNGs in the same state.
TEST(HparamSamplingTest, DeterministicForEqualSeeds) {
  Hyperparameters hps = ParseHps(kMixed);
  for (uint32_t seed = 0; seed < 50; ++seed) {
    NpRand a(seed), b(seed);
    EXPECT_EQ(SampleHyperparameters(hps, a), SampleHyperparameters(hps, b));
    EXPECT_EQ(a.Bits64(), b.Bits64());
  }
}

// Every sampled value lies in its declared range and has the right JSON type.
TEST(HparamSamplingTest, ValuesInRange) {
  Hyperparameters hps = ParseHps(kMixed);
  NpRand rng(17);
  for (int i = 0; i < 500; ++i) {
    json s = SampleHyperparameters(hps, rng);
    EXPECT_EQ(s["global_batch_size"], 64);
    ASSERT_TRUE(s["layers"].is_number_integer());
    EXPECT_GE(s["layers"].get<int64_t>(), 1);
    EXPECT_LE(s["layers"].get<int64_t>(), 4);
    double lr = s["lr"].get<double>();
    EXPECT_GE(lr, 1e-4);
    EXPECT_LT(lr, 1e-2);
    double dropout = s["dropout"].get<double>();
    EXPECT_GE(dropout, 0.2);
    EXPECT_LT(dropout, 0.5);
    json opt = s["opt"];
    EXPECT_TRUE(opt == "sgd" || opt == "adam" || opt == (json{{"name", "lamb"}})) << opt;
  }
}

// Names are visited in sorted order: int then double consumes Intn then Uniform.
TEST(HparamSamplingTest, ConsumesRngInSortedNameOrder) {
  Hyperparameters hps = ParseHps(
      "  b_double: {type: double, minval: 0, maxval: 1}\n"
      "  a_int: {type: int, minval: 0, maxval: 9}\n");
  NpRand rng(42), expect(42);
  json s = SampleHyperparameters(hps, rng);
  EXPECT_EQ(s["a_int"], expect.Intn(10));
  EXPECT_EQ(s["b_double"], expect.Uniform(0, 1));
  EXPECT_EQ(rng.Bits32(), expect.Bits32());
}

// Constants and one-element categoricals draw nothing from the RNG.
TEST(HparamSamplingTest, ConstAndSingleCategoricalDrawNothing) {
  Hyperparameters hps = ParseHps(
      "  c: {type: const, val: [1, 2]}\n"
      "  d: {type: categorical, vals: [only]}\n"
      "  e: hello\n");
  NpRand rng(9), untouched(9);
  json s = SampleHyperparameters(hps, rng);
  EXPECT_EQ(s, (json{{"c", {1, 2}}, {"d", "only"}, {"e", "hello"}}));
  EXPECT_EQ(rng.Bits32(), untouched.Bits32());
}

// Nested groups sample recursively into maps; nested constants come back unchanged.
TEST(HparamSamplingTest, NestedGroups) {
  Hyperparameters hps = ParseHps(
      "  optimizer:\n"
      "    type_name: adam\n"
      "    lr: 0.01\n"
      "    momentum: 0.9\n"
      "  arch:\n"
      "    depth: {type: int, minval: 2, maxval: 3}\n"
      "    block: {width: {type: categorical, vals: [8, 16]}}\n"
      "  empty: {}\n");
  NpRand rng(1);
  json s = SampleHyperparameters(hps, rng);
  EXPECT_EQ(s["optimizer"], (json{{"type_name", "adam"}, {"lr", 0.01}, {"momentum", 0.9}}));
  EXPECT_EQ(s["empty"], json::object());
  int64_t depth = s["arch"]["depth"].get<int64_t>();
  EXPECT_TRUE(depth == 2 || depth == 3);
  json width = s["arch"]["block"]["width"];
  EXPECT_TRUE(width == 8 || width == 16);
  // arch.block.width (Intn(2)) is drawn before arch.depth (Intn(2)): "block" < "depth".
  NpRand expect(1);
  EXPECT_EQ(width, expect.Intn(2) == 0 ? 8 : 16);
  EXPECT_EQ(depth, 2 + expect.Intn(2));
}

}  // namespace
}  // namespace det::master::searcher
