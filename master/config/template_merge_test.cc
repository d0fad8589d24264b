#include "master/config/template_merge.h"

#include <gtest/gtest.h>

namespace det::master::config {
namespace {

using nlohmann::json;

TEST(TemplateMerge, ConfigWinsAndTemplateFillsObjects) {
  json cfg = json::parse(R"({"name": "mine", "resources": {"slots_per_trial": 2},
                             "data": {"a": 1}})");
  json tpl = json::parse(R"({"name": "tpl", "description": "from template",
                             "resources": {"slots_per_trial": 1, "resource_pool": "gpu"},
                             "data": {"a": 9, "b": 2}})");
  json out = MergeTemplate(cfg, tpl);
  EXPECT_EQ(out["name"], "mine");
  EXPECT_EQ(out["description"], "from template");
  EXPECT_EQ(out["resources"], json::parse(R"({"slots_per_trial": 2, "resource_pool": "gpu"})"));
  EXPECT_EQ(out["data"], json::parse(R"({"a": 1, "b": 2})"));
}

TEST(TemplateMerge, NullInConfigTakesTemplateValue) {
  json out = MergeTemplate(json::parse(R"({"description": null})"),
                           json::parse(R"({"description": "t"})"));
  EXPECT_EQ(out["description"], "t");
}

TEST(TemplateMerge, PlainListsAreNotCombined) {
  json out = MergeTemplate(json::parse(R"({"entrypoint": ["python3", "a.py"]})"),
                           json::parse(R"({"entrypoint": ["python3", "b.py", "-x"]})"));
  EXPECT_EQ(out["entrypoint"], json::parse(R"(["python3", "a.py"])"));
}

TEST(TemplateMerge, BindMountsAndDevicesAppendByContainerPath) {
  json cfg = json::parse(R"({"bind_mounts": [{"host_path": "/a", "container_path": "/data"}],
                             "resources": {"devices": [{"host_path": "/dev/x",
                                                        "container_path": "/dev/x"}]}})");
  json tpl = json::parse(R"({"bind_mounts": [{"host_path": "/b", "container_path": "/data"},
                                             {"host_path": "/c", "container_path": "/c"}],
                             "resources": {"devices": [{"host_path": "/dev/y",
                                                        "container_path": "/dev/y"}]}})");
  json out = MergeTemplate(cfg, tpl);
  ASSERT_EQ(out["bind_mounts"].size(), 2u);
  EXPECT_EQ(out["bind_mounts"][0]["host_path"], "/a");
  EXPECT_EQ(out["bind_mounts"][1]["host_path"], "/c");
  ASSERT_EQ(out["resources"]["devices"].size(), 2u);
  EXPECT_EQ(out["resources"]["devices"][1]["host_path"], "/dev/y");
}

TEST(TemplateMerge, EnvironmentVariablesTemplateFirst) {
  json out = MergeTemplate(json::parse(R"({"environment": {"environment_variables": ["A=cfg"]}})"),
                           json::parse(R"({"environment": {"environment_variables": ["A=tpl",
                                                                                     "B=1"]}})"));
  EXPECT_EQ(out["environment"]["environment_variables"],
            json::parse(R"(["A=tpl", "B=1", "A=cfg"])"));
  // Per-device form on one side: every device gets template entries, then the config's.
  out =
      MergeTemplate(json::parse(R"({"environment": {"environment_variables": {"cuda": ["C=1"]}}})"),
                    json::parse(R"({"environment": {"environment_variables": ["T=1"]}})"));
  EXPECT_EQ(out["environment"]["environment_variables"]["cuda"], json::parse(R"(["T=1", "C=1"])"));
  EXPECT_EQ(out["environment"]["environment_variables"]["cpu"], json::parse(R"(["T=1"])"));
}

TEST(TemplateMerge, ProxyPortsByPortAndImagePerDevice) {
  json out = MergeTemplate(
      json::parse(R"({"environment": {"proxy_ports": [{"proxy_port": 80}],
                                      "image": {"cuda": "mine"}}})"),
      json::parse(R"({"environment": {"proxy_ports": [{"proxy_port": 80, "proxy_tcp": true},
                                                      {"proxy_port": 81}],
                                      "image": "theirs"}})"));
  EXPECT_EQ(out["environment"]["proxy_ports"],
            json::parse(R"([{"proxy_port": 80}, {"proxy_port": 81}])"));
  EXPECT_EQ(out["environment"]["image"],
            json::parse(R"({"cuda": "mine", "cpu": "theirs", "rocm": "theirs"})"));
}

TEST(TemplateMerge, CheckpointStorageOfAnotherTypeKeepsOnlySharedKeys) {
  json out = MergeTemplate(
      json::parse(R"({"checkpoint_storage": {"type": "shared_fs", "host_path": "/tmp"}})"),
      json::parse(R"({"checkpoint_storage": {"type": "s3", "bucket": "b",
                                             "save_trial_best": 3}})"));
  EXPECT_EQ(out["checkpoint_storage"],
            json::parse(R"({"type": "shared_fs", "host_path": "/tmp", "save_trial_best": 3})"));
  // Same type: every key merges.
  out = MergeTemplate(json::parse(R"({"checkpoint_storage": {"type": "s3", "prefix": "p"}})"),
                      json::parse(R"({"checkpoint_storage": {"type": "s3", "bucket": "b"}})"));
  EXPECT_EQ(out["checkpoint_storage"],
            json::parse(R"({"type": "s3", "prefix": "p", "bucket": "b"})"));
  // No storage in the config: the template's whole.
  out = MergeTemplate(json::object(), json::parse(R"({"checkpoint_storage": {"type": "s3"}})"));
  EXPECT_EQ(out["checkpoint_storage"]["type"], "s3");
}

TEST(TemplateMerge, AzureCredentialsFromOneSide) {
  json out =
      MergeTemplate(json::parse(R"({"checkpoint_storage": {"type": "azure", "account_url": "u"}})"),
                    json::parse(R"({"checkpoint_storage": {"type": "azure", "container": "c",
                                             "connection_string": "cs"}})"));
  EXPECT_EQ(out["checkpoint_storage"],
            json::parse(R"({"type": "azure", "account_url": "u", "container": "c"})"));
}

TEST(TemplateMerge, SearcherOfAnotherNameKeepsSharedKeys) {
  json out = MergeTemplate(
      json::parse(R"({"searcher": {"name": "single", "max_length": {"batches": 10}}})"),
      json::parse(R"({"searcher": {"name": "random", "max_trials": 5, "metric": "loss",
                                   "smaller_is_better": true}})"));
  EXPECT_EQ(out["searcher"], json::parse(R"({"name": "single", "max_length": {"batches": 10},
                                            "metric": "loss", "smaller_is_better": true})"));
}

TEST(TemplateMerge, HyperparametersMergeOnlyNestedGroups) {
  json out =
      MergeTemplate(json::parse(R"({"hyperparameters": {"lr": {"type": "const", "val": 0.1},
                                          "opt": {"beta": 0.9}}})"),
                    json::parse(R"({"hyperparameters": {"lr": {"type": "double", "minval": 0.0,
                                                  "maxval": 1.0},
                                          "opt": {"beta": 0.5, "eps": 1e-8},
                                          "batch": 32}})"));
  EXPECT_EQ(out["hyperparameters"]["lr"], json::parse(R"({"type": "const", "val": 0.1})"));
  EXPECT_EQ(out["hyperparameters"]["opt"], json::parse(R"({"beta": 0.9, "eps": 1e-8})"));
  EXPECT_EQ(out["hyperparameters"]["batch"], 32);
}

TEST(TemplateMerge, LabelsAndLogPoliciesUnion) {
  json out = MergeTemplate(
      json::parse(R"({"labels": ["a"], "log_policies": [{"name": "oom", "pattern": "x"}]})"),
      json::parse(R"({"labels": ["a", "b"], "log_policies": [{"name": "oom", "pattern": "y"},
                                                             {"pattern": "z",
                                                              "action": "cancel_retries"}]})"));
  EXPECT_EQ(out["labels"], json::parse(R"(["a", "b"])"));
  ASSERT_EQ(out["log_policies"].size(), 2u);
  EXPECT_EQ(out["log_policies"][0]["pattern"], "x");
  EXPECT_EQ(out["log_policies"][1]["pattern"], "z");
}

}  // namespace
}  // namespace det::master::config
