#include "master/config/experiment_config.h"

#include <gtest/gtest.h>

namespace det::master::config {
namespace {

using nlohmann::json;

ConfigDefaults Defaults() {
  ConfigDefaults d;
  d.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/var/det/ckpt"}};
  d.experiment_seed = 4242;
  d.default_name = "Experiment (fluffy-cat)";
  return d;
}

constexpr const char* kMinimal =
    "entrypoint: model_def:MyTrial\n"
    "searcher:\n"
    "  name: single\n"
    "  metric: validation_loss\n"
    "  max_length:\n"
    "    batches: 1000\n";

void ExpectProblem(const Status& status, const std::string& line) {
  EXPECT_NE(status.message().find(line), std::string::npos) << "missing: " << line << "\nin:\n"
                                                            << status.message();
}

// A minimal config gets every default filled, in the typed config and in `defaulted`.
TEST(ExperimentConfigTest, MinimalValidConfigDefaults) {
  auto cfg = ParseExperimentConfig(kMinimal, Defaults());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->name, "Experiment (fluffy-cat)");
  EXPECT_EQ(cfg->entrypoint, "model_def:MyTrial");
  EXPECT_EQ(cfg->searcher.name, "single");
  EXPECT_EQ(cfg->searcher.metric, "validation_loss");
  EXPECT_TRUE(cfg->searcher.smaller_is_better);
  ASSERT_TRUE(cfg->searcher.max_length.has_value());
  EXPECT_EQ(cfg->searcher.max_length->unit, Length::Unit::kBatches);
  EXPECT_EQ(cfg->searcher.max_length->value, 1000u);
  EXPECT_EQ(cfg->searcher.max_trials, 1);
  EXPECT_EQ(cfg->resources.slots_per_trial, 1);
  EXPECT_EQ(cfg->resources.weight, 1);
  EXPECT_EQ(cfg->resources.resource_pool, "");
  EXPECT_FALSE(cfg->resources.priority.has_value());
  EXPECT_EQ(cfg->max_restarts, 5);
  EXPECT_EQ(cfg->experiment_seed, 4242u);
  EXPECT_EQ(cfg->scheduling_unit, 100);
  EXPECT_EQ(cfg->min_validation_period.value, 0u);
  EXPECT_EQ(cfg->checkpoint_policy, "best");
  EXPECT_EQ(cfg->checkpoint_storage, (json{{"type", "shared_fs"},
                                           {"host_path", "/var/det/ckpt"},
                                           {"propagation", "rprivate"},
                                           {"save_experiment_best", 0},
                                           {"save_trial_best", 1},
                                           {"save_trial_latest", 1}}));

  const json& d = cfg->defaulted;
  EXPECT_EQ(d["name"], "Experiment (fluffy-cat)");
  EXPECT_EQ(d["max_restarts"], 5);
  EXPECT_EQ(d["reproducibility"], (json{{"experiment_seed", 4242}}));
  EXPECT_EQ(d["min_validation_period"], (json{{"batches", 0}}));
  EXPECT_EQ(d["min_checkpoint_period"], (json{{"batches", 0}}));
  EXPECT_EQ(d["scheduling_unit"], 100);
  EXPECT_EQ(d["records_per_epoch"], 0);
  EXPECT_EQ(d["perform_initial_validation"], false);
  EXPECT_EQ(d["checkpoint_policy"], "best");
  EXPECT_EQ(d["searcher"]["smaller_is_better"], true);
  EXPECT_EQ(d["resources"]["slots_per_trial"], 1);
  EXPECT_EQ(d["hyperparameters"], json::object());
  EXPECT_EQ(d["labels"], json::array());
  EXPECT_EQ(d["checkpoint_storage"], cfg->checkpoint_storage);
}

// Rebuilding from the stored defaulted JSON yields the same config, byte for byte.
// Determined's merged config carries the warm-start sources even when unset, as nulls.
TEST(ExperimentConfigTest, DefaultedSearcherCarriesNullWarmStartSources) {
  auto cfg = ParseExperimentConfig(kMinimal, Defaults());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  const json& s = cfg->defaulted["searcher"];
  ASSERT_TRUE(s.contains("source_trial_id"));
  EXPECT_TRUE(s["source_trial_id"].is_null());
  ASSERT_TRUE(s.contains("source_checkpoint_uuid"));
  EXPECT_TRUE(s["source_checkpoint_uuid"].is_null());
  // The defaulted config parses again (forks and continues submit it back).
  auto again = ParseExperimentConfig(cfg->defaulted.dump(), Defaults());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->searcher.source_trial_id.has_value());
}

TEST(ExperimentConfigTest, FromJsonRebuildsSameConfig) {
  auto cfg = ParseExperimentConfig(
      "name: exp\nentrypoint: [python3, train.py]\nlabels: [a, b]\n"
      "hyperparameters: {lr: {type: log, minval: -3, maxval: -1}, n: {a: 1}}\n"
      "searcher: {name: random, metric: acc, smaller_is_better: false, max_trials: 3,"
      " max_steps: 5}\nbatches_per_step: 10\nmin_validation_period: 2\n"
      "resources: {slots_per_trial: 2, priority: 10, max_slots: 4}\n"
      "reproducibility: {experiment_seed: 7}\n",
      Defaults());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto again = ExperimentConfigFromJson(cfg->defaulted);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->defaulted.dump(), cfg->defaulted.dump());
  EXPECT_EQ(again->name, "exp");
  EXPECT_EQ(again->labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(again->entrypoint, (json{"python3", "train.py"}));
  EXPECT_EQ(again->experiment_seed, 7u);
  EXPECT_FALSE(again->searcher.smaller_is_better);
  EXPECT_EQ(again->searcher.max_trials, 3);
  EXPECT_EQ(again->searcher.max_length->value, 50u);
  EXPECT_EQ(again->scheduling_unit, 10);
  EXPECT_EQ(again->min_validation_period.value, 20u);
  EXPECT_EQ(again->resources.priority, 10);
  EXPECT_EQ(again->resources.max_slots, 4);
  EXPECT_EQ(again->hyperparameters.size(), 2u);
  EXPECT_EQ(again->checkpoint_storage, cfg->checkpoint_storage);
}

// Legacy `max_steps` becomes `max_length: {batches: steps * batches_per_step}`.
TEST(ExperimentConfigTest, LegacyMaxStepsConversion) {
  auto cfg = ParseExperimentConfig(
      "entrypoint: m:T\nsearcher: {name: random, metric: loss, max_trials: 5, max_steps: 10}\n",
      Defaults());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->searcher.max_length->unit, Length::Unit::kBatches);
  EXPECT_EQ(cfg->searcher.max_length->value, 1000u);
  EXPECT_EQ(cfg->defaulted["searcher"]["max_length"], (json{{"batches", 1000}}));
  EXPECT_FALSE(cfg->defaulted["searcher"].contains("max_steps"));
  EXPECT_EQ(cfg->searcher.max_concurrent_trials, 16);

  auto custom = ParseExperimentConfig(
      "entrypoint: m:T\nbatches_per_step: 32\nmin_checkpoint_period: 3\n"
      "searcher: {name: single, metric: loss, max_steps: 2}\n",
      Defaults());
  ASSERT_TRUE(custom.ok()) << custom.status().ToString();
  EXPECT_EQ(custom->searcher.max_length->value, 64u);
  EXPECT_EQ(custom->min_checkpoint_period.value, 96u);
  EXPECT_EQ(custom->scheduling_unit, 32);

  auto both = ParseExperimentConfig(
      "entrypoint: m:T\nsearcher: {name: single, metric: l, max_steps: 2, max_length: 5}\n",
      Defaults());
  ASSERT_FALSE(both.ok());
  ExpectProblem(both.status(), "searcher.max_steps: cannot be combined with max_length");
}

// All problems are reported at once, each with its field path.
TEST(ExperimentConfigTest, ReportsEveryProblemAtOnce) {
  auto cfg = ParseExperimentConfig(
      "foo: 1\n"
      "max_restarts: -1\n"
      "searcher: {name: random, metric: loss, max_concurrent_trials: -2}\n"
      "resources: {slots_per_trial: -1, priority: 100, slots: x}\n"
      "reproducibility: {experiment_seed: -5}\n"
      "hyperparameters: {lr: {type: double, minval: 1, maxval: 0}}\n",
      Defaults());
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
  Status s = cfg.status();
  ExpectProblem(s, "foo: unknown field");
  ExpectProblem(s, "max_restarts: must be >= 0 (got -1)");
  ExpectProblem(s, "searcher.max_trials: required for searcher 'random'");
  ExpectProblem(s, "searcher.max_concurrent_trials: must be >= 0 (got -2)");
  ExpectProblem(s, "resources.slots_per_trial: must be >= 0 (got -1)");
  ExpectProblem(s, "resources.priority: must be between 1 and 99 (got 100)");
  ExpectProblem(s, "resources.slots: must be an integer");
  ExpectProblem(s, "reproducibility.experiment_seed: must be between 0 and 2147483647");
  ExpectProblem(s, "hyperparameters.lr.minval: minval must be less than maxval");
  ExpectProblem(s, "entrypoint: required");
  EXPECT_GE(std::count(s.message().begin(), s.message().end(), '\n'), 9);
}

TEST(ExperimentConfigTest, SearcherRules) {
  auto zero = ParseExperimentConfig(
      "entrypoint: m:T\nsearcher: {name: random, metric: loss, max_trials: 0}\n", Defaults());
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "searcher.max_trials: must be > 0 (got 0)");

  auto missing =
      ParseExperimentConfig("entrypoint: m:T\nsearcher: {max_length: {foo: 1}}\n", Defaults());
  ASSERT_FALSE(missing.ok());
  ExpectProblem(missing.status(), "searcher.name: required");
  ExpectProblem(missing.status(), "searcher.metric: required");
  ExpectProblem(missing.status(), "searcher.max_length.foo: unknown field");

  auto bad_name = ParseExperimentConfig(
      "entrypoint: m:T\nsearcher: {name: bayes, metric: l, source_trial_id: 1,"
      " source_checkpoint_uuid: abc}\n",
      Defaults());
  ASSERT_FALSE(bad_name.ok());
  ExpectProblem(bad_name.status(), "searcher.name: must be one of single, random");
  ExpectProblem(bad_name.status(), "searcher: at most one of source_trial_id");

  auto two_units = ParseExperimentConfig(
      "entrypoint: m:T\nsearcher: {name: single, metric: l, max_length: {batches: 1, "
      "epochs: 2}}\n",
      Defaults());
  ASSERT_FALSE(two_units.ok());
  ExpectProblem(two_units.status(),
                "searcher.max_length: must set exactly one of batches, records, epochs");

  // Every searcher name parses with its own fields; the method-specific ones keep their values.
  const std::pair<const char*, const char*> methods[] = {
      {"grid", "max_concurrent_trials: 2"},
      {"adaptive_asha", "max_trials: 4, divisor: 3, mode: standard"},
      {"async_halving", "max_trials: 4, divisor: 3, num_rungs: 3"},
      {"adaptive", "budget: {batches: 900}, divisor: 3, mode: standard"},
      {"adaptive_simple", "max_trials: 4, divisor: 3, mode: standard"}};
  for (const auto& [name, fields] : methods) {
    // As in Determined's schema, only grid and adaptive_asha (of these) take a unitless length.
    bool unitless = std::string(name) == "grid" || std::string(name) == "adaptive_asha";
    auto cfg = ParseExperimentConfig(
        std::string("entrypoint: m:T\nsearcher: {name: ") + name + ", metric: l, max_length: " +
            (unitless ? "90" : "{batches: 90}") + ", " + fields + "}\n",
        Defaults());
    ASSERT_TRUE(cfg.ok()) << name << ": " << cfg.status().ToString();
    if (std::string(name) != "grid") {
      EXPECT_EQ(cfg->defaulted["searcher"]["divisor"], 3);
    }
    EXPECT_EQ(cfg->searcher.max_length->unit,
              unitless ? Length::Unit::kUnitless : Length::Unit::kBatches);
  }
}

// Bad YAML is reported with its line and column.
TEST(ExperimentConfigTest, BadYamlHasLineAndColumn) {
  auto cfg = ParseExperimentConfig("entrypoint: m:T\nsearcher: {name: single\n", Defaults());
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("line "), std::string::npos);
  EXPECT_NE(cfg.status().message().find("column "), std::string::npos);

  auto not_map = ParseExperimentConfig("- a\n- b\n", Defaults());
  ASSERT_FALSE(not_map.ok());
  EXPECT_EQ(not_map.status().message(), "config: must be a map (got [\"a\",\"b\"])");
}

// Every documented top-level field is accepted; unmodelled ones pass through unchanged.
TEST(ExperimentConfigTest, AcceptsEveryTopLevelField) {
  auto cfg =
      ParseExperimentConfig(std::string(kMinimal) +
                                "bind_mounts: [{host_path: /data, container_path: /mnt/data}]\n"
                                "checkpoint_policy: all\n"
                                "data: {url: s3://x}\n"
                                "data_layer: {type: shared_fs}\n"
                                "debug: true\n"
                                "description: hello\n"
                                "environment: {image: foo, environment_variables: [A=1]}\n"
                                "hyperparameters: {global_batch_size: 32}\n"
                                "internal: null\n"
                                "integrations: {pachyderm: {}}\n"
                                "labels: [x]\n"
                                "log_policies: [{pattern: OOM, action: cancel_retries}]\n"
                                "max_restarts: 0\n"
                                "min_checkpoint_period: {epochs: 1}\n"
                                "min_validation_period: {records: 640}\n"
                                "name: full\n"
                                "optimizations: {aggregation_frequency: 2}\n"
                                "perform_initial_validation: true\n"
                                "preemption_timeout: 60\n"
                                "profiling: {enabled: false}\n"
                                "project: p\n"
                                "workspace: w\n"
                                "records_per_epoch: 6400\n"
                                "reproducibility: {experiment_seed: 1}\n"
                                "resources: {slots_per_trial: 0, shm_size: 1024}\n"
                                "scheduling_unit: 50\n"
                                "batches_per_step: 20\n"
                                "security: {kerberos: {config_file: /etc/krb5.conf}}\n"
                                "tensorboard_storage: {type: shared_fs}\n"
                                "retention_policy: {log_retention_days: 7}\n"
                                "pbs: {}\n"
                                "slurm: {gpu_type: a100}\n"
                                "checkpoint_storage: {type: s3, bucket: b}\n",
                            Defaults());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  const json& d = cfg->defaulted;
  EXPECT_EQ(d["environment"]["image"], (json{{"cpu", "foo"}, {"cuda", "foo"}, {"rocm", "foo"}}));
  EXPECT_EQ(d["environment"]["environment_variables"]["cuda"], (json{"A=1"}));
  EXPECT_EQ(d["slurm"], (json{{"gpu_type", "a100"}}));
  EXPECT_EQ(d["optimizations"]["aggregation_frequency"], 2);
  EXPECT_EQ(d["optimizations"]["mixed_precision"], "O0");
  EXPECT_EQ(d["bind_mounts"][0]["read_only"], false);
  EXPECT_EQ(d["bind_mounts"][0]["propagation"], "rprivate");
  EXPECT_EQ(cfg->scheduling_unit, 50);
  EXPECT_EQ(cfg->min_validation_period.unit, Length::Unit::kRecords);
  EXPECT_EQ(cfg->min_checkpoint_period.unit, Length::Unit::kEpochs);
  EXPECT_EQ(cfg->checkpoint_policy, "all");
  EXPECT_TRUE(cfg->perform_initial_validation);
  EXPECT_TRUE(cfg->debug);
  EXPECT_EQ(cfg->resources.slots_per_trial, 0);
  EXPECT_EQ(cfg->description, "hello");
  EXPECT_EQ(cfg->workspace, "w");
  EXPECT_EQ(cfg->project, "p");
  auto again = ExperimentConfigFromJson(d);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->defaulted.dump(), d.dump());
}

// The experiment's storage merges over the master's when the types agree; otherwise only the
// experiment's is used; shared_fs needs an absolute host_path.
TEST(ExperimentConfigTest, CheckpointStorageMerge) {
  auto same = ParseExperimentConfig(
      std::string(kMinimal) + "checkpoint_storage: {storage_path: sub, save_trial_best: 3}\n",
      Defaults());
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->checkpoint_storage["host_path"], "/var/det/ckpt");
  EXPECT_EQ(same->checkpoint_storage["storage_path"], "sub");
  EXPECT_EQ(same->checkpoint_storage["save_trial_best"], 3);
  EXPECT_EQ(same->checkpoint_storage["save_trial_latest"], 1);

  auto other = ParseExperimentConfig(
      std::string(kMinimal) + "checkpoint_storage: {type: s3, bucket: ckpts}\n", Defaults());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_FALSE(other->checkpoint_storage.contains("host_path"));
  EXPECT_EQ(other->checkpoint_storage["bucket"], "ckpts");

  auto relative = ParseExperimentConfig(
      std::string(kMinimal) + "checkpoint_storage: {type: shared_fs, host_path: tmp/x}\n",
      Defaults());
  ASSERT_FALSE(relative.ok());
  ExpectProblem(relative.status(),
                "checkpoint_storage.host_path: must be an absolute path (got \"tmp/x\")");

  auto missing = ParseExperimentConfig(
      std::string(kMinimal) + "checkpoint_storage: {type: gcs, save_trial_best: -1}\n", Defaults());
  ASSERT_FALSE(missing.ok());
  ExpectProblem(missing.status(), "checkpoint_storage.bucket: required for type 'gcs'");
  ExpectProblem(missing.status(), "checkpoint_storage.save_trial_best: must be >= 0 (got -1)");

  // With no storage anywhere the field stays null for the caller to decide.
  auto none = ParseExperimentConfig(kMinimal, ConfigDefaults{});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->checkpoint_storage.is_null());
}

TEST(ExperimentConfigTest, EntrypointForms) {
  auto bad = ParseExperimentConfig(
      "entrypoint: [python3, 3]\nsearcher: {name: single, metric: l}\n", Defaults());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "entrypoint: must be a non-empty string or list of strings (got [\"python3\",3])");
}

}  // namespace
}  // namespace det::master::config
