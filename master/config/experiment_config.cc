// ParseExperimentConfig / ExperimentConfigFromJson: one normalizing pass over the config JSON
// that validates every field (collecting all problems), fills defaults and builds the typed
// config. Rebuilding from a stored defaulted config runs the same pass, which is idempotent.

#include "master/config/experiment_config.h"

#include <limits>
#include <string>
#include <vector>

#include "master/config/checkpoint_storage_parse.h"
#include "master/config/hyperparameters_parse.h"
#include "master/config/length_parse.h"
#include "master/config/problems.h"
#include "master/config/resources_parse.h"
#include "master/config/searcher_config_parse.h"

namespace det::master::config {

namespace {

using internal::Has;
using internal::JoinPath;
using internal::Problems;
using internal::ReadBool;
using internal::ReadInt;
using internal::ReadString;
using nlohmann::json;

constexpr int64_t kDefaultBatchesPerStep = 100;
constexpr int64_t kDefaultMaxRestarts = 5;

// Every top-level field of expconf v0 plus the step-era `batches_per_step`.
const std::vector<std::string_view> kTopLevelFields = {
    "bind_mounts", "checkpoint_policy", "checkpoint_storage", "data", "data_layer", "debug",
    "description", "entrypoint", "environment", "hyperparameters", "internal", "integrations",
    "labels", "log_policies", "max_restarts", "min_checkpoint_period", "min_validation_period",
    "name", "optimizations", "perform_initial_validation", "preemption_timeout", "profiling",
    "project", "workspace", "records_per_epoch", "reproducibility", "resources",
    "scheduling_unit", "batches_per_step", "searcher", "security", "tensorboard_storage",
    "retention_policy", "pbs", "slurm"};

json FieldOrNull(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? json(nullptr) : *it;
}

void ParseEntrypoint(const json& in, ExperimentConfig* cfg, Problems* problems) {
  if (!Has(in, "entrypoint")) {
    problems->Add("entrypoint", "required");
    return;
  }
  const json& ep = in.at("entrypoint");
  bool ok = false;
  if (ep.is_string()) {
    ok = !ep.get<std::string>().empty();
  } else if (ep.is_array() && !ep.empty()) {
    ok = true;
    for (const json& part : ep) ok = ok && part.is_string();
  }
  if (!ok) {
    problems->Add("entrypoint", "must be a non-empty string or list of strings", ep);
    return;
  }
  cfg->entrypoint = ep;
}

void ParseLabels(const json& in, json* out, ExperimentConfig* cfg, Problems* problems) {
  (*out)["labels"] = json::array();
  if (!Has(in, "labels")) return;
  const json& labels = in.at("labels");
  if (!labels.is_array()) {
    problems->Add("labels", "must be a list of strings", labels);
    return;
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!labels[i].is_string()) {
      problems->Add("labels[" + std::to_string(i) + "]", "must be a string", labels[i]);
      continue;
    }
    cfg->labels.push_back(labels[i].get<std::string>());
  }
  (*out)["labels"] = labels;
}

void ParseSeed(const json& in, const ConfigDefaults& defaults, json* out, ExperimentConfig* cfg,
               Problems* problems) {
  json repro = FieldOrNull(in, "reproducibility");
  if (repro.is_null()) repro = json::object();
  if (!repro.is_object()) {
    problems->Add("reproducibility", "must be a map", repro);
    return;
  }
  internal::RejectUnknownKeys(repro, {"experiment_seed"}, "reproducibility", problems);
  cfg->experiment_seed = defaults.experiment_seed;
  if (auto seed = ReadInt(repro, "experiment_seed", "reproducibility", problems)) {
    if (*seed < 0 || *seed > std::numeric_limits<uint32_t>::max()) {
      problems->Add("reproducibility.experiment_seed", "must be between 0 and 4294967295",
                    *seed);
    } else {
      cfg->experiment_seed = static_cast<uint32_t>(*seed);
    }
  }
  repro["experiment_seed"] = cfg->experiment_seed;
  (*out)["reproducibility"] = repro;
}

// min_validation_period / min_checkpoint_period; a legacy integer counts steps.
Length ParsePeriod(const json& in, const char* key, int64_t batches_per_step, json* out,
                   Problems* problems) {
  Length period{Length::Unit::kBatches, 0};
  if (Has(in, key)) {
    const json& v = in.at(key);
    if (v.is_number_integer()) {
      if (auto steps = ReadInt(in, key, "", problems); steps && *steps >= 0) {
        period.value = static_cast<uint64_t>(*steps * batches_per_step);
      } else if (steps) {
        problems->Add(key, "must be >= 0", v);
      }
    } else if (auto parsed = internal::ParseLength(v, key, /*allow_unitless=*/false, problems)) {
      period = *parsed;
    }
  }
  (*out)[key] = internal::LengthToJson(period);
  return period;
}

int64_t ReadIntAtLeast(const json& in, const char* key, int64_t min, int64_t fallback,
                       json* out, Problems* problems) {
  int64_t value = fallback;
  if (auto v = ReadInt(in, key, "", problems)) {
    if (*v < min) problems->Add(key, "must be >= " + std::to_string(min), *v);
    value = *v;
  }
  (*out)[key] = value;
  return value;
}

bool ReadBoolDefault(const json& in, const char* key, bool fallback, json* out,
                     Problems* problems) {
  bool value = ReadBool(in, key, "", problems).value_or(fallback);
  (*out)[key] = value;
  return value;
}

std::string ReadStringDefault(const json& in, const char* key, const std::string& fallback,
                              json* out, Problems* problems) {
  std::string value = ReadString(in, key, "", problems).value_or(fallback);
  (*out)[key] = value;
  return value;
}

ExperimentConfig Normalize(const json& in, const ConfigDefaults& defaults, Problems* problems) {
  ExperimentConfig cfg;
  if (!in.is_object()) {
    problems->Add("config", "must be a map", in);
    return cfg;
  }
  json out = in;
  internal::RejectUnknownKeys(in, kTopLevelFields, "", problems);

  int64_t batches_per_step = kDefaultBatchesPerStep;
  if (auto bps = ReadInt(in, "batches_per_step", "", problems)) {
    if (*bps < 1) problems->Add("batches_per_step", "must be >= 1", *bps);
    else batches_per_step = *bps;
  }

  cfg.name = ReadStringDefault(in, "name", defaults.default_name, &out, problems);
  if (cfg.name.empty()) problems->Add("name", "must not be empty");
  cfg.description = ReadStringDefault(in, "description", "", &out, problems);
  ParseLabels(in, &out, &cfg, problems);
  ParseEntrypoint(in, &cfg, problems);

  cfg.hyperparameters = internal::ParseHyperparameters(
      FieldOrNull(in, "hyperparameters"), "hyperparameters", &out["hyperparameters"], problems);
  cfg.searcher = internal::ParseSearcher(FieldOrNull(in, "searcher"), batches_per_step,
                                         &out["searcher"], problems);
  if (cfg.searcher.name == "grid") {
    internal::RequireGridCounts(cfg.hyperparameters, "hyperparameters", problems);
  }
  cfg.resources =
      internal::ParseResources(FieldOrNull(in, "resources"), &out["resources"], problems);
  out["bind_mounts"] = internal::ParseBindMounts(FieldOrNull(in, "bind_mounts"), problems);

  cfg.max_restarts =
      ReadIntAtLeast(in, "max_restarts", 0, kDefaultMaxRestarts, &out, problems);
  ParseSeed(in, defaults, &out, &cfg, problems);

  cfg.checkpoint_storage = internal::DefaultCheckpointStorage(
      internal::MergeCheckpointStorage(FieldOrNull(in, "checkpoint_storage"),
                                       defaults.checkpoint_storage),
      problems);
  out["checkpoint_storage"] = cfg.checkpoint_storage;

  cfg.min_validation_period =
      ParsePeriod(in, "min_validation_period", batches_per_step, &out, problems);
  cfg.min_checkpoint_period =
      ParsePeriod(in, "min_checkpoint_period", batches_per_step, &out, problems);
  // `batches_per_step` is the step-era name of `scheduling_unit`.
  cfg.scheduling_unit =
      ReadIntAtLeast(in, "scheduling_unit", 1, batches_per_step, &out, problems);
  cfg.records_per_epoch = ReadIntAtLeast(in, "records_per_epoch", 0, 0, &out, problems);
  cfg.perform_initial_validation =
      ReadBoolDefault(in, "perform_initial_validation", false, &out, problems);
  cfg.debug = ReadBoolDefault(in, "debug", false, &out, problems);

  cfg.checkpoint_policy = ReadStringDefault(in, "checkpoint_policy", "best", &out, problems);
  if (cfg.checkpoint_policy != "best" && cfg.checkpoint_policy != "all" &&
      cfg.checkpoint_policy != "none") {
    problems->Add("checkpoint_policy", "must be one of best, all, none", cfg.checkpoint_policy);
  }

  cfg.workspace = ReadStringDefault(in, "workspace", "", &out, problems);
  cfg.project = ReadStringDefault(in, "project", "", &out, problems);
  if (cfg.workspace.empty() != cfg.project.empty()) {
    problems->Add(cfg.workspace.empty() ? "workspace" : "project",
                  "workspace and project must be given together");
  }
  if (!Has(in, "data")) out["data"] = json::object();

  cfg.defaulted = std::move(out);
  return cfg;
}

}  // namespace

Result<ExperimentConfig> ParseExperimentConfig(std::string_view yaml_text,
                                               const ConfigDefaults& defaults) {
  DET_ASSIGN_OR_RETURN(json parsed, YamlToJson(yaml_text));
  Problems problems;
  ExperimentConfig cfg = Normalize(parsed, defaults, &problems);
  DET_RETURN_IF_ERROR(problems.ToStatus());
  return cfg;
}

Result<ExperimentConfig> ExperimentConfigFromJson(const nlohmann::json& defaulted) {
  Problems problems;
  ConfigDefaults none;
  // The stored config carries its own seed and name; these only matter for hand-made input.
  ExperimentConfig cfg = Normalize(defaulted, none, &problems);
  DET_RETURN_IF_ERROR(problems.ToStatus());
  return cfg;
}

}  // namespace det::master::config
