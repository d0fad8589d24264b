// One test per config rule (issue #3): each invalid case names its field path, the value and
// the rule; each legacy form converts to the current one; every default is filled.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "master/config/config_test_util.h"
#include "master/config/experiment_config.h"

namespace det::master::config {
namespace {

using nlohmann::json;
using testing::With;

Result<ExperimentConfig> Parse(const std::string& text, ConfigDefaults defaults = {}) {
  return ParseExperimentConfig(text, defaults);
}

struct RuleCase {
  const char* what;
  json patch;
  const char* expected;
};

class ConfigRuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(ConfigRuleTest, ReportsTheRule) {
  const RuleCase& c = GetParam();
  auto cfg = Parse(With(c.patch));
  ASSERT_FALSE(cfg.ok()) << c.what << " was accepted";
  EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cfg.status().message().find(c.expected), std::string::npos)
      << c.what << "\nmissing: " << c.expected << "\nin:\n"
      << cfg.status().message();
}

json Searcher(json fields) {
  json s = {{"name", nullptr}, {"metric", "loss"}, {"max_length", nullptr}};
  s.merge_patch(fields);
  return json{{"searcher", s}};
}

const RuleCase kRuleCases[] = {
    {"unknown top-level", {{"foo", 1}}, "foo: unknown field"},
    {"unknown searcher field", Searcher({{"name", "random"}, {"max_trials", 2}, {"bogus", 1}}),
     "searcher.bogus: unknown field"},
    {"field of another searcher", Searcher({{"name", "single"}, {"max_trials", 2}}),
     "searcher.max_trials: unknown field for searcher 'single'"},
    {"random needs max_trials", Searcher({{"name", "random"}}),
     "searcher.max_trials: required for searcher 'random'"},
    {"max_trials > 0", Searcher({{"name", "random"}, {"max_trials", 0}}),
     "searcher.max_trials: must be > 0 (got 0)"},
    {"bad searcher name", Searcher({{"name", "bayes"}}), "searcher.name: must be one of"},
    {"metric required", {{"searcher", {{"metric", nullptr}}}}, "searcher.metric: required"},
    {"two sources",
     {{"searcher", {{"source_trial_id", 3}, {"source_checkpoint_uuid", "abc"}}}},
     "at most one of source_trial_id and source_checkpoint_uuid"},
    {"source_trial_id > 0",
     {{"searcher", {{"source_trial_id", 0}}}},
     "searcher.source_trial_id: must be > 0"},
    {"asha needs a length", Searcher({{"name", "adaptive_asha"}, {"max_trials", 4}}),
     "searcher.max_time: required for searcher 'adaptive_asha'"},
    {"time_metric without max_time",
     Searcher({{"name", "adaptive_asha"}, {"max_trials", 4}, {"time_metric", "batches"}}),
     "searcher.max_time: time_metric and max_time must be given together"},
    {"max_time > 0",
     Searcher(
         {{"name", "adaptive_asha"}, {"max_trials", 4}, {"time_metric", "b"}, {"max_time", 0}}),
     "searcher.max_time: must be > 0 (got 0)"},
    {"asha mode",
     Searcher({{"name", "adaptive_asha"}, {"max_trials", 4}, {"max_length", 10}, {"mode", "fast"}}),
     "searcher.mode: must be one of aggressive, standard, conservative (got \"fast\")"},
    {"divisor > 1",
     Searcher({{"name", "adaptive_asha"}, {"max_trials", 4}, {"max_length", 10}, {"divisor", 1}}),
     "searcher.divisor: must be > 1 (got 1)"},
    {"max_rungs > 0",
     Searcher({{"name", "adaptive_asha"}, {"max_trials", 4}, {"max_length", 10}, {"max_rungs", 0}}),
     "searcher.max_rungs: must be > 0 (got 0)"},
    {"bracket_rungs ints",
     Searcher({{"name", "adaptive_asha"},
               {"max_trials", 4},
               {"max_length", 10},
               {"bracket_rungs", {2, "x"}}}),
     "searcher.bracket_rungs[1]: must be an integer > 0"},
    {"async_halving num_rungs",
     Searcher({{"name", "async_halving"}, {"max_trials", 4}, {"max_length", 10}}),
     "searcher.num_rungs: required for searcher 'async_halving'"},
    {"adaptive budget", Searcher({{"name", "adaptive"}, {"max_length", {{"batches", 100}}}}),
     "searcher.budget: required for searcher 'adaptive'"},
    {"adaptive_simple max_length", Searcher({{"name", "adaptive_simple"}, {"max_trials", 4}}),
     "searcher.max_length: required for searcher 'adaptive_simple'"},
    {"pbt population_size", Searcher({{"name", "pbt"}}),
     "searcher.population_size: required for searcher 'pbt'"},
    {"pbt replace_function", Searcher({{"name", "pbt"}}),
     "searcher.replace_function: required for searcher 'pbt'"},
    {"pbt truncate_fraction",
     Searcher({{"name", "pbt"},
               {"population_size", 4},
               {"num_rounds", 2},
               {"length_per_round", {{"batches", 5}}},
               {"replace_function", {{"truncate_fraction", 0.9}}},
               {"explore_function", {{"resample_probability", 0.5}, {"perturb_factor", 2}}}}),
     "searcher.replace_function.truncate_fraction: must be between 0 and 0.5 (got 0.9)"},
    {"pbt perturb_factor",
     Searcher({{"name", "pbt"},
               {"population_size", 4},
               {"num_rounds", 2},
               {"length_per_round", {{"batches", 5}}},
               {"replace_function", {{"truncate_fraction", 0.2}}},
               {"explore_function", {{"resample_probability", 0.5}, {"perturb_factor", 2}}}}),
     "searcher.explore_function.perturb_factor: must be between 0 and 1 (got 2)"},
    {"two length units",
     {{"searcher", {{"max_length", {{"batches", 1}, {"epochs", 1}}}}}},
     "searcher.max_length: must set exactly one of batches, records, epochs"},
    {"negative length",
     {{"searcher", {{"max_length", {{"batches", -1}}}}}},
     "searcher.max_length.batches: must be >= 0 (got -1)"},
    {"epochs need records_per_epoch",
     {{"searcher", {{"max_length", {{"batches", nullptr}, {"epochs", 2}}}}}},
     "records_per_epoch: required (> 0) when searcher.max_length is in epochs"},
    {"legacy and current length together",
     {{"searcher", {{"max_steps", 10}}}},
     "searcher.max_steps: cannot be combined with max_length"},
    {"minval < maxval",
     {{"hyperparameters", {{"lr", {{"type", "double"}, {"minval", 1}, {"maxval", 0.5}}}}}},
     "hyperparameters.lr.minval: minval must be less than maxval"},
    {"int bounds integral",
     {{"hyperparameters", {{"n", {{"type", "int"}, {"minval", 1.5}, {"maxval", 4}}}}}},
     "hyperparameters.n.minval: must be an integer (got 1.5)"},
    {"categorical vals",
     {{"hyperparameters", {{"opt", {{"type", "categorical"}, {"vals", json::array()}}}}}},
     "hyperparameters.opt.vals: must be a non-empty list"},
    {"hp type",
     {{"hyperparameters", {{"x", {{"type", "uniform"}}}}}},
     "hyperparameters.x.type: must be one of const, int, double, log, categorical"},
    {"log base",
     {{"hyperparameters",
       {{"lr", {{"type", "log"}, {"minval", -3}, {"maxval", -1}, {"base", 0}}}}}},
     "hyperparameters.lr.base: must be > 0 (got 0)"},
    {"grid count",
     json{{"searcher", {{"name", "grid"}}},
          {"hyperparameters", {{"lr", {{"type", "double"}, {"minval", 0}, {"maxval", 1}}}}}},
     "hyperparameters.lr.count: required for searcher 'grid'"},
    {"slots exceed max_slots",
     {{"resources", {{"slots_per_trial", 4}, {"max_slots", 2}}}},
     "resources.slots_per_trial: slots_per_trial (4) exceeds max_slots (2)"},
    {"resources.slots type",
     {{"resources", {{"slots", "two"}}}},
     "resources.slots: must be an integer (got \"two\")"},
    {"priority range",
     {{"resources", {{"priority", 0}}}},
     "resources.priority: must be between 1 and 99 (got 0)"},
    {"shm_size", {{"resources", {{"shm_size", -1}}}}, "resources.shm_size: must be a size"},
    {"device form",
     {{"resources", {{"devices", {"nocolon"}}}}},
     "resources.devices[0]: must be /host_path:/container_path[:mode]"},
    {"relative host_path",
     {{"bind_mounts", {{{"host_path", "data"}, {"container_path", "/d"}}}}},
     "bind_mounts[0].host_path: must be an absolute path (got \"data\")"},
    {"bind mount container_path",
     {{"bind_mounts", {{{"host_path", "/data"}, {"container_path", "."}}}}},
     "bind_mounts[0].container_path: must not be the working directory"},
    {"bind mount required",
     {{"bind_mounts", {json::object()}}},
     "bind_mounts[0].host_path: required"},
    {"image type",
     {{"environment", {{"image", 5}}}},
     "environment.image: must be a string or a map of cpu, cuda, rocm images (got 5)"},
    {"image device",
     {{"environment", {{"image", {{"tpu", "x"}}}}}},
     "environment.image.tpu: unknown field"},
    {"env var form",
     {{"environment", {{"environment_variables", {"=x"}}}}},
     "environment.environment_variables[0]: must be a NAME=VALUE string"},
    {"env var map",
     {{"environment", {{"environment_variables", {{"cpu", {1}}}}}}},
     "environment.environment_variables.cpu[0]: must be a NAME=VALUE string (got 1)"},
    {"ports",
     {{"environment", {{"ports", {{"web", 70000}}}}}},
     "environment.ports.web: must be a port between 1 and 65535 (got 70000)"},
    {"registry_auth",
     {{"environment", {{"registry_auth", {{"user", "x"}}}}}},
     "environment.registry_auth.user: unknown field"},
    {"force_pull_image",
     {{"environment", {{"force_pull_image", "yes"}}}},
     "environment.force_pull_image: must be a boolean"},
    {"environment unknown", {{"environment", {{"gpus", 1}}}}, "environment.gpus: unknown field"},
    {"storage type",
     {{"checkpoint_storage", {{"type", "ftp"}}}},
     "checkpoint_storage.type: must be one of shared_fs, directory, s3, gcs, azure, hdfs"},
    {"storage field of another type",
     {{"checkpoint_storage", {{"type", "gcs"}, {"bucket", "b"}, {"access_key", "k"}}}},
     "checkpoint_storage.access_key: unknown field"},
    {"s3 bucket",
     {{"checkpoint_storage", {{"type", "s3"}}}},
     "checkpoint_storage.bucket: required for type 's3'"},
    {"hdfs fields",
     {{"checkpoint_storage", {{"type", "hdfs"}, {"hdfs_url", "http://n:50070"}}}},
     "checkpoint_storage.hdfs_path: required for type 'hdfs'"},
    {"azure auth",
     {{"checkpoint_storage", {{"type", "azure"}, {"container", "c"}}}},
     "exactly one of connection_string and account_url"},
    {"shared_fs absolute",
     {{"checkpoint_storage", {{"type", "shared_fs"}, {"host_path", "x"}}}},
     "checkpoint_storage.host_path: must be an absolute path"},
    {"save_* >= 0",
     {{"checkpoint_storage",
       {{"type", "shared_fs"}, {"host_path", "/x"}, {"save_trial_latest", -1}}}},
     "checkpoint_storage.save_trial_latest: must be >= 0 (got -1)"},
    {"mixed_precision",
     {{"optimizations", {{"mixed_precision", "O9"}}}},
     "optimizations.mixed_precision: must be one of O0, O1, O2, O3"},
    {"aggregation_frequency",
     {{"optimizations", {{"aggregation_frequency", 0}}}},
     "optimizations.aggregation_frequency: must be > 0 (got 0)"},
    {"profiling range",
     {{"profiling", {{"begin_on_batch", 10}, {"end_after_batch", 5}}}},
     "profiling.end_after_batch: must be >= begin_on_batch (got 5)"},
    {"data_layer map", {{"data_layer", "s3"}}, "data_layer: must be a map (got \"s3\")"},
    {"log policy action",
     {{"log_policies", {{{"pattern", "x"}, {"action", "reboot"}}}}},
     "log_policies[0].action: must be cancel_retries or exclude_node"},
    {"preemption_timeout",
     {{"preemption_timeout", -1}},
     "preemption_timeout: must be >= 0 (got -1)"},
    {"seed range",
     {{"reproducibility", {{"experiment_seed", 2147483648LL}}}},
     "reproducibility.experiment_seed: must be between 0 and 2147483647"},
    {"max_restarts", {{"max_restarts", -1}}, "max_restarts: must be >= 0 (got -1)"},
    {"scheduling_unit", {{"scheduling_unit", 0}}, "scheduling_unit: must be >= 1 (got 0)"},
    {"checkpoint_policy",
     {{"checkpoint_policy", "some"}},
     "checkpoint_policy: must be one of best, all, none"},
    {"entrypoint", {{"entrypoint", nullptr}}, "entrypoint: required"},
    {"entrypoint list",
     {{"entrypoint", {"python3", 3}}},
     "entrypoint: must be a non-empty string or list of strings"},
    {"labels", {{"labels", {"a", 1}}}, "labels[1]: must be a string (got 1)"},
    {"data map", {{"data", "s3://bucket"}}, "data: must be a map"},
    {"workspace without project", {{"workspace", "w"}}, "workspace and project"},
    {"min_validation_period",
     {{"min_validation_period", {{"steps", 1}}}},
     "min_validation_period.steps: unknown field"},
};

INSTANTIATE_TEST_SUITE_P(Rules, ConfigRuleTest, ::testing::ValuesIn(kRuleCases));

// Every problem is reported at once, not just the first.
TEST(ConfigRulesTest, ReportsEveryProblem) {
  auto cfg = Parse(With({{"foo", 1},
                         {"max_restarts", -2},
                         {"resources", {{"slots_per_trial", 3}, {"max_slots", 1}}}}));
  ASSERT_FALSE(cfg.ok());
  for (const char* line : {"foo: unknown field", "max_restarts: must be >= 0",
                           "slots_per_trial (3) exceeds max_slots (1)"}) {
    EXPECT_NE(cfg.status().message().find(line), std::string::npos) << line;
  }
}

TEST(ConfigRulesTest, YamlSyntaxErrorsNameLineAndColumn) {
  auto cfg = Parse("entrypoint: x\nsearcher: {name: single\n  metric: [a, b\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("invalid yaml: line "), std::string::npos)
      << cfg.status().message();
  EXPECT_NE(cfg.status().message().find("column "), std::string::npos);
}

TEST(ConfigRulesTest, DeepNestingAndAliasBombsAreRejected) {
  auto deep = YamlToJson(std::string(5000, '[') + std::string(5000, ']'));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nesting deeper than"), std::string::npos);
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c, ++prev) {
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + "]\n";
  }
  auto expanded = YamlToJson(bomb);
  ASSERT_FALSE(expanded.ok());
  EXPECT_NE(expanded.status().message().find("after expanding aliases"), std::string::npos);
}

// ---------------------------------------------------------------------------- legacy forms

TEST(ConfigLegacyTest, StepsConvertWithBatchesPerStep) {
  auto cfg = Parse(
      "entrypoint: model_def:MNistTrial\n"
      "batches_per_step: 32\n"
      "min_validation_period: 4\n"
      "min_checkpoint_period: 2\n"
      "searcher: {name: random, metric: error, max_trials: 5, max_steps: 10}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->searcher.max_length->unit, Length::Unit::kBatches);
  EXPECT_EQ(cfg->searcher.max_length->value, 320u);
  EXPECT_EQ(cfg->min_validation_period.value, 128u);
  EXPECT_EQ(cfg->min_checkpoint_period.value, 64u);
  EXPECT_EQ(cfg->scheduling_unit, 32);
  EXPECT_TRUE(cfg->entrypoint_is_trial_class);
  const json& d = cfg->defaulted;
  EXPECT_FALSE(d.contains("batches_per_step"));
  EXPECT_FALSE(d["searcher"].contains("max_steps"));
  EXPECT_EQ(d["searcher"]["max_length"], (json{{"batches", 320}}));
  EXPECT_EQ(d["min_validation_period"], (json{{"batches", 128}}));
  EXPECT_EQ(d["scheduling_unit"], 32);
}

TEST(ConfigLegacyTest, AdaptiveStepsBecomeLengthAndBudget) {
  auto cfg = Parse(
      "entrypoint: model_def:Trial\n"
      "searcher: {name: adaptive, metric: error, target_trial_steps: 256, step_budget: 1024}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->searcher.max_length->value, 25600u);
  ASSERT_TRUE(cfg->searcher.budget.has_value());
  EXPECT_EQ(cfg->searcher.budget->value, 102400u);
  const json& s = cfg->defaulted["searcher"];
  EXPECT_EQ(s["budget"], (json{{"batches", 102400}}));
  EXPECT_EQ(s["mode"], "standard");
  EXPECT_EQ(s["divisor"], 4);
  EXPECT_EQ(s["max_rungs"], 5);
  EXPECT_EQ(s["train_stragglers"], true);
}

TEST(ConfigLegacyTest, PbtStepsPerRoundBecomesLengthPerRound) {
  auto cfg = Parse(
      "entrypoint: model_def:Trial\n"
      "batches_per_step: 10\n"
      "searcher:\n"
      "  name: pbt\n  metric: error\n  population_size: 8\n  num_rounds: 3\n"
      "  steps_per_round: 5\n"
      "  replace_function: {truncate_fraction: 0.25}\n"
      "  explore_function: {resample_probability: 0.3, perturb_factor: 0.2}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  ASSERT_TRUE(cfg->searcher.length_per_round.has_value());
  EXPECT_EQ(cfg->searcher.length_per_round->value, 50u);
  EXPECT_EQ(cfg->searcher.population_size, 8);
  EXPECT_DOUBLE_EQ(cfg->searcher.truncate_fraction, 0.25);
  EXPECT_EQ(cfg->defaulted["searcher"]["length_per_round"], (json{{"batches", 50}}));
}

TEST(ConfigLegacyTest, AshaStepEraAndTimeEraSideBySide) {
  auto old_era = Parse(
      "entrypoint: model_def:Trial\n"
      "searcher: {name: adaptive_asha, metric: error, target_trial_steps: 64, max_trials: 16,"
      " max_concurrent_trials: 4}\n");
  ASSERT_TRUE(old_era.ok()) << old_era.status().message();
  EXPECT_EQ(old_era->searcher.max_length->value, 6400u);
  auto new_era = Parse(
      "entrypoint: python3 train.py\n"
      "searcher: {name: adaptive_asha, metric: error, time_metric: batches, max_time: 1000,"
      " max_trials: 16}\n");
  ASSERT_TRUE(new_era.ok()) << new_era.status().message();
  EXPECT_EQ(new_era->searcher.time_metric, "batches");
  EXPECT_EQ(new_era->searcher.max_time, 1000);
  const json& s = new_era->defaulted["searcher"];
  EXPECT_EQ(s["mode"], "standard");
  EXPECT_EQ(s["divisor"], 4);
  EXPECT_EQ(s["max_rungs"], 5);
  EXPECT_EQ(s["max_concurrent_trials"], 16);
  EXPECT_EQ(s["bracket_rungs"], json::array());
  EXPECT_EQ(s["stop_once"], false);
}

TEST(ConfigLegacyTest, AsyncHalvingDefaults) {
  auto cfg = Parse(
      "entrypoint: python3 train.py\n"
      "searcher: {name: async_halving, metric: error, num_rungs: 3, max_trials: 9,"
      " max_length: {batches: 900}}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const json& s = cfg->defaulted["searcher"];
  EXPECT_EQ(s["divisor"], 4);
  EXPECT_EQ(s["max_concurrent_trials"], 16);
  EXPECT_EQ(s["stop_once"], false);
  EXPECT_EQ(cfg->searcher.num_rungs, 3);
}

TEST(ConfigLegacyTest, EpochsAndRecordsWithRecordsPerEpoch) {
  auto cfg = Parse(
      "entrypoint: model_def:Trial\n"
      "records_per_epoch: 50000\n"
      "hyperparameters: {global_batch_size: 64}\n"
      "min_validation_period: {epochs: 1}\n"
      "searcher: {name: single, metric: error, max_length: {epochs: 3}}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->global_batch_size, 64);
  auto batches =
      LengthToBatches(*cfg->searcher.max_length, cfg->records_per_epoch, cfg->global_batch_size);
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(*batches, 2344u);  // ceil(150000 / 64)
}

TEST(ConfigLengthTest, LengthToBatches) {
  EXPECT_EQ(*LengthToBatches({Length::Unit::kBatches, 7}, 0, std::nullopt), 7u);
  EXPECT_EQ(*LengthToBatches({Length::Unit::kUnitless, 7}, 0, std::nullopt), 7u);
  EXPECT_EQ(*LengthToBatches({Length::Unit::kRecords, 130}, 0, 64), 3u);
  EXPECT_EQ(*LengthToBatches({Length::Unit::kEpochs, 2}, 100, 10), 20u);
  EXPECT_FALSE(LengthToBatches({Length::Unit::kRecords, 130}, 0, std::nullopt).ok());
  EXPECT_FALSE(LengthToBatches({Length::Unit::kEpochs, 2}, 0, 10).ok());
}

// ---------------------------------------------------------------------------- defaults

TEST(ConfigDefaultsTest, EverySectionIsDefaulted) {
  auto cfg = Parse(With(json::object()));
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const json& d = cfg->defaulted;
  EXPECT_EQ(d["optimizations"], (json{{"aggregation_frequency", 1},
                                      {"average_aggregated_gradients", true},
                                      {"average_training_metrics", true},
                                      {"gradient_compression", false},
                                      {"grad_updates_size_file", nullptr},
                                      {"mixed_precision", "O0"},
                                      {"tensor_fusion_threshold", 64},
                                      {"tensor_fusion_cycle_time", 1},
                                      {"auto_tune_tensor_fusion", false}}));
  EXPECT_EQ(d["profiling"], (json{{"enabled", false},
                                  {"begin_on_batch", 0},
                                  {"end_after_batch", nullptr},
                                  {"sync_timings", true}}));
  EXPECT_EQ(d["data_layer"], (json{{"type", "shared_fs"},
                                   {"host_storage_path", nullptr},
                                   {"container_storage_path", nullptr}}));
  EXPECT_EQ(d["log_policies"].size(), 2u);
  EXPECT_EQ(d["log_policies"][0]["name"], "CUDA OOM");
  EXPECT_EQ(d["preemption_timeout"], 3600);
  EXPECT_EQ(d["environment"]["image"]["cpu"], "determinedai/pytorch-ngc-dev:0736b6d");
  EXPECT_EQ(d["environment"]["environment_variables"],
            (json{{"cpu", json::array()}, {"cuda", json::array()}, {"rocm", json::array()}}));
  EXPECT_EQ(d["environment"]["force_pull_image"], false);
  EXPECT_EQ(d["environment"]["ports"], json::object());
  EXPECT_EQ(d["resources"]["max_slots"], nullptr);
  EXPECT_EQ(d["resources"]["devices"], json::array());
  EXPECT_EQ(d["resources"]["native_parallel"], false);
  EXPECT_EQ(d["data"], json::object());
  EXPECT_EQ(d["bind_mounts"], json::array());
  EXPECT_FALSE(cfg->entrypoint_is_trial_class);
}

TEST(ConfigDefaultsTest, EnvironmentPerDeviceForms) {
  auto cfg = Parse(With({{"environment",
                          {{"image", {{"cpu", "img:cpu"}, {"gpu", "img:gpu"}}},
                           {"environment_variables", {{"cpu", {"A=1"}}, {"gpu", {"B=2"}}}}}}}));
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->environment.image.at("cpu"), "img:cpu");
  EXPECT_EQ(cfg->environment.image.at("cuda"), "img:gpu");
  EXPECT_EQ(cfg->environment.environment_variables.at("cuda"), std::vector<std::string>{"B=2"});
  EXPECT_EQ(cfg->defaulted["environment"]["environment_variables"]["cpu"], json({"A=1"}));
}

TEST(ConfigDefaultsTest, TaskContainerDefaultsMergeUnderTheExperiment) {
  ConfigDefaults defaults;
  defaults.preemption_timeout = 120;
  defaults.task_container_defaults = {
      {"environment_variables", {"FROM_MASTER=1", "SHARED=master"}},
      {"image", "master/image:1"},
      {"bind_mounts", {{{"host_path", "/datasets"}, {"container_path", "/data"}}}},
      {"shm_size", 1024}};
  auto cfg = Parse(With({{"environment", {{"environment_variables", {"SHARED=exp"}}}}}), defaults);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->preemption_timeout, 120);
  EXPECT_EQ(cfg->environment.environment_variables.at("cpu"),
            (std::vector<std::string>{"FROM_MASTER=1", "SHARED=master", "SHARED=exp"}));
  EXPECT_EQ(cfg->environment.image.at("cuda"), "master/image:1");
  ASSERT_EQ(cfg->bind_mounts.size(), 1u);
  EXPECT_EQ(cfg->bind_mounts[0].container_path, "/data");
  EXPECT_EQ(cfg->resources.shm_size, 1024);
  auto again = ExperimentConfigFromJson(cfg->defaulted);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->defaulted.dump(), cfg->defaulted.dump());
}

// ---------------------------------------------------------------------------- test mode

TEST(ConfigTestModeTest, RewritesToASingleOneBatchTrial) {
  json user = *YamlToJson(
      "entrypoint: python3 train.py\n"
      "batches_per_step: 50\n"
      "max_restarts: 3\n"
      "checkpoint_storage: {type: shared_fs, host_path: /ckpt, save_trial_best: 3}\n"
      "hyperparameters:\n"
      "  lr: {type: log, minval: -4, maxval: -1, base: 10}\n"
      "  layers: {type: int, minval: 1, maxval: 4}\n"
      "  opt: {type: categorical, vals: [sgd, adam]}\n"
      "  global_batch_size: 32\n"
      "searcher: {name: adaptive_asha, metric: acc, smaller_is_better: false, max_trials: 9,"
      " max_length: {batches: 1000}}\n");
  json t = MakeTestModeConfig(user, 42);
  auto cfg = ParseExperimentConfig(t.dump(), {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->searcher.name, "single");
  EXPECT_EQ(cfg->searcher.metric, "acc");
  EXPECT_FALSE(cfg->searcher.smaller_is_better);
  EXPECT_EQ(cfg->searcher.max_length->unit, Length::Unit::kBatches);
  EXPECT_EQ(cfg->searcher.max_length->value, 1u);
  EXPECT_EQ(cfg->scheduling_unit, 1);
  EXPECT_EQ(cfg->min_validation_period.value, 1u);
  EXPECT_EQ(cfg->max_restarts, 0);
  EXPECT_EQ(cfg->checkpoint_storage["save_trial_best"], 0);
  EXPECT_EQ(cfg->checkpoint_storage["save_trial_latest"], 0);
  EXPECT_EQ(cfg->checkpoint_storage["save_experiment_best"], 0);
  for (const auto& [name, hp] : cfg->hyperparameters) {
    EXPECT_EQ(hp.type, Hyperparameter::Type::kConst) << name;
  }
  double lr = cfg->hyperparameters.at("lr").val.get<double>();
  EXPECT_GE(lr, 1e-4);
  EXPECT_LE(lr, 1e-1);
  int64_t layers = cfg->hyperparameters.at("layers").val.get<int64_t>();
  EXPECT_GE(layers, 1);
  EXPECT_LE(layers, 4);
  EXPECT_EQ(MakeTestModeConfig(user, 42), t) << "sampling is seeded";
}

}  // namespace
}  // namespace det::master::config
