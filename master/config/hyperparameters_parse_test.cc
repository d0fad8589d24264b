#include <gtest/gtest.h>

#include "master/config/experiment_config.h"

namespace det::master::config {
namespace {

using nlohmann::json;
using Type = Hyperparameter::Type;

Result<ExperimentConfig> Parse(const std::string& hps_yaml,
                               const std::string& searcher = "{name: single, metric: loss}") {
  return ParseExperimentConfig("entrypoint: m:T\nsearcher: " + searcher +
                                   "\nhyperparameters:\n" + hps_yaml,
                               {});
}

// Every hyperparameter form parses into its typed shape and a defaulted JSON form.
TEST(HyperparametersParseTest, AllTypes) {
  auto cfg = Parse(
      "  global_batch_size: 64\n"
      "  list_const: [1, 2]\n"
      "  c: {type: const, val: {a: 1}}\n"
      "  i: {type: int, minval: 1, maxval: 8, count: 3}\n"
      "  d: {type: double, minval: 0.1, maxval: 0.5}\n"
      "  l: {type: log, minval: -5, maxval: 1}\n"
      "  cat: {type: categorical, vals: [a, 2, true]}\n"
      "  nest: {inner: {type: int, minval: 0, maxval: 2}, k: v}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  const Hyperparameters& h = cfg->hyperparameters;
  EXPECT_EQ(h.at("global_batch_size").type, Type::kConst);
  EXPECT_EQ(h.at("global_batch_size").val, 64);
  EXPECT_EQ(h.at("list_const").val, (json{1, 2}));
  EXPECT_EQ(h.at("c").val, (json{{"a", 1}}));
  EXPECT_EQ(h.at("i").type, Type::kInt);
  EXPECT_EQ(h.at("i").minval, 1);
  EXPECT_EQ(h.at("i").maxval, 8);
  EXPECT_EQ(h.at("i").count, 3);
  EXPECT_EQ(h.at("d").type, Type::kDouble);
  EXPECT_EQ(h.at("l").type, Type::kLog);
  EXPECT_EQ(h.at("l").base, 10);
  EXPECT_EQ(h.at("cat").vals.size(), 3u);
  EXPECT_EQ(h.at("nest").type, Type::kNested);
  EXPECT_EQ(h.at("nest").nested.at("inner").type, Type::kInt);
  EXPECT_EQ(h.at("nest").nested.at("k").val, "v");

  const json& d = cfg->defaulted["hyperparameters"];
  EXPECT_EQ(d["global_batch_size"], (json{{"type", "const"}, {"val", 64}}));
  EXPECT_EQ(d["l"]["base"], 10);
  EXPECT_EQ(d["nest"]["k"], (json{{"type", "const"}, {"val", "v"}}));
  EXPECT_FALSE(d["nest"].contains("type"));
}

// Each invalid hyperparameter is reported with its full path.
TEST(HyperparametersParseTest, ErrorsNameTheirPaths) {
  auto cfg = Parse(
      "  lr: {type: double, minval: 1, maxval: 0.5}\n"
      "  n: {type: int, minval: 1.5, maxval: 3}\n"
      "  l: {type: log, minval: 0, maxval: 1, base: 0}\n"
      "  cat: {type: categorical, vals: []}\n"
      "  bad: {type: fancy}\n"
      "  cnt: {type: int, minval: 0, maxval: 3, count: 0}\n"
      "  deep: {inner: {type: double, minval: 2, maxval: 2}}\n"
      "  extra: {type: const, val: 1, other: 2}\n");
  ASSERT_FALSE(cfg.ok());
  std::string m = cfg.status().message();
  for (const char* expected : {
           "hyperparameters.lr.minval: minval must be less than maxval",
           "hyperparameters.n.minval: must be an integer (got 1.5)",
           "hyperparameters.l.base: must be > 0 (got 0)",
           "hyperparameters.cat.vals: must be a non-empty list (got [])",
           "hyperparameters.bad.type: must be one of const, int, double, log, categorical",
           "hyperparameters.cnt.count: must be >= 1 (got 0)",
           "hyperparameters.deep.inner.minval: minval must be less than maxval",
           "hyperparameters.extra.other: unknown field"}) {
    EXPECT_NE(m.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n" << m;
  }
}

// Grid search needs `count` on every numeric hyperparameter, nested ones included.
TEST(HyperparametersParseTest, GridRequiresCount) {
  auto cfg = Parse("  a: {type: int, minval: 0, maxval: 3}\n  g: {b: {type: log, minval: 0, "
                   "maxval: 1, base: 2}}\n  c: {type: categorical, vals: [1]}\n",
                   "{name: grid, metric: loss}");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message(),
            "hyperparameters.a.count: required for searcher 'grid'\n"
            "hyperparameters.g.b.count: required for searcher 'grid'");
}

}  // namespace
}  // namespace det::master::config
