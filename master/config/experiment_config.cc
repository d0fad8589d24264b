// ParseExperimentConfig / ExperimentConfigFromJson: one normalizing pass over the config JSON
// that validates every field (collecting all problems), fills defaults and builds the typed
// config. Rebuilding from a stored defaulted config runs the same pass, which is idempotent.

#include "master/config/experiment_config.h"

#include <cctype>
#include <limits>
#include <string>
#include <vector>

#include "master/config/checkpoint_storage_parse.h"
#include "master/config/environment_parse.h"
#include "master/config/hyperparameters_parse.h"
#include "master/config/length_parse.h"
#include "master/config/problems.h"
#include "master/config/resources_parse.h"
#include "master/config/searcher_config_parse.h"
#include "master/config/sections_parse.h"

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
constexpr int64_t kMaxExperimentSeed = 2147483647;  // 2^31 - 1

// Every top-level field of expconf v0 plus the step-era `batches_per_step`.
const std::vector<std::string_view> kTopLevelFields = {"bind_mounts",
                                                       "checkpoint_policy",
                                                       "checkpoint_storage",
                                                       "data",
                                                       "data_layer",
                                                       "debug",
                                                       "description",
                                                       "entrypoint",
                                                       "environment",
                                                       "hyperparameters",
                                                       "internal",
                                                       "integrations",
                                                       "labels",
                                                       "log_policies",
                                                       "max_restarts",
                                                       "min_checkpoint_period",
                                                       "min_validation_period",
                                                       "name",
                                                       "optimizations",
                                                       "perform_initial_validation",
                                                       "preemption_timeout",
                                                       "profiling",
                                                       "project",
                                                       "workspace",
                                                       "records_per_epoch",
                                                       "reproducibility",
                                                       "resources",
                                                       "scheduling_unit",
                                                       "batches_per_step",
                                                       "searcher",
                                                       "security",
                                                       "tensorboard_storage",
                                                       "retention_policy",
                                                       "pbs",
                                                       "slurm"};

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
  // The legacy Trial-class form "package.module:Class.Nested".
  if (ep.is_string()) {
    const std::string& text = ep.get_ref<const std::string&>();
    size_t colon = text.find(':');
    auto is_dotted_name = [](std::string_view part) {
      if (part.empty() || part.front() == '.' || part.back() == '.') return false;
      for (char c : part) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
      }
      return true;
    };
    cfg->entrypoint_is_trial_class = colon != std::string::npos &&
                                     is_dotted_name(std::string_view(text).substr(0, colon)) &&
                                     is_dotted_name(std::string_view(text).substr(colon + 1));
  }
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
    if (*seed < 0 || *seed > kMaxExperimentSeed) {
      problems->Add("reproducibility.experiment_seed", "must be between 0 and 2147483647", *seed);
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
      int64_t batches = 0;
      auto steps = ReadInt(in, key, "", problems);
      if (steps && *steps >= 0 && __builtin_mul_overflow(*steps, batches_per_step, &batches)) {
        problems->Add(key, "out of range", v);
      } else if (steps && *steps >= 0) {
        period.value = static_cast<uint64_t>(batches);
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

int64_t ReadIntAtLeast(const json& in, const char* key, int64_t min, int64_t fallback, json* out,
                       Problems* problems) {
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

// bind_mounts of task_container_defaults are added unless the experiment mounts the same
// container_path.
json MergeBindMounts(const json& experiment, const json& task_defaults) {
  if (!task_defaults.is_object() || !task_defaults.contains("bind_mounts")) return experiment;
  const json& extra = task_defaults.at("bind_mounts");
  if (!extra.is_array() || !(experiment.is_null() || experiment.is_array())) return experiment;
  json merged = experiment.is_null() ? json::array() : experiment;
  for (const json& mount : extra) {
    bool shadowed = false;
    for (const json& m : merged) {
      shadowed =
          shadowed || (m.is_object() && mount.is_object() &&
                       m.value("container_path", json()) == mount.value("container_path", json()));
    }
    if (!shadowed) merged.push_back(mount);
  }
  return merged;
}

std::vector<BindMount> TypedBindMounts(const json& mounts) {
  std::vector<BindMount> out;
  if (!mounts.is_array()) return out;
  for (const json& m : mounts) {
    if (!m.is_object()) continue;
    BindMount b;
    if (m.value("host_path", json()).is_string()) b.host_path = m.at("host_path");
    if (m.value("container_path", json()).is_string()) b.container_path = m.at("container_path");
    if (m.value("read_only", json()).is_boolean()) b.read_only = m.at("read_only");
    if (m.value("propagation", json()).is_string()) b.propagation = m.at("propagation");
    out.push_back(std::move(b));
  }
  return out;
}

// Resources fields the master's task_container_defaults supply when the experiment does not.
json ResourcesWithTaskDefaults(json resources, const json& task_defaults) {
  if (!task_defaults.is_object()) return resources;
  if (resources.is_null()) resources = json::object();
  if (!resources.is_object()) return resources;
  for (const char* key : {"devices", "shm_size"}) {
    if (!Has(resources, key) && Has(task_defaults, key)) resources[key] = task_defaults.at(key);
  }
  return resources;
}

// An optional list of strings at `section.key`.
void CheckStringList(const json& section, const char* key, const std::string& path,
                     Problems* problems) {
  if (!Has(section, key)) return;
  const json& list = section.at(key);
  std::string list_path = JoinPath(path, key);
  if (!list.is_array()) {
    problems->Add(list_path, "must be a list of strings", list);
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      problems->Add(list_path + "[" + std::to_string(i) + "]", "must be a string", list[i]);
    }
  }
}

// slurm / pbs: options for HPC launchers, kept as given.
void CheckHpcSection(const json& section, const char* name, const char* args_key,
                     Problems* problems) {
  std::vector<std::string_view> known = {"slots_per_node", args_key};
  if (std::string_view(name) == "slurm") known.push_back("gpu_type");
  internal::RejectUnknownKeys(section, known, name, problems);
  if (auto v = ReadInt(section, "slots_per_node", name, problems); v && *v < 1) {
    problems->Add(JoinPath(name, "slots_per_node"), "must be >= 1", *v);
  }
  ReadString(section, "gpu_type", name, problems);
  CheckStringList(section, args_key, name, problems);
}

void CheckSecurity(const json& security, Problems* problems) {
  internal::RejectUnknownKeys(security, {"kerberos"}, "security", problems);
  if (!Has(security, "kerberos")) return;
  const json& kerberos = security.at("kerberos");
  if (!kerberos.is_object()) {
    problems->Add("security.kerberos", "must be a map", kerberos);
    return;
  }
  internal::RejectUnknownKeys(kerberos, {"config_file"}, "security.kerberos", problems);
  if (!kerberos.contains("config_file")) {
    problems->Add("security.kerberos.config_file", "required");
  } else if (!kerberos.at("config_file").is_string()) {
    problems->Add("security.kerberos.config_file", "must be a string", kerberos.at("config_file"));
  }
}

void CheckRetentionPolicy(const json& policy, Problems* problems) {
  internal::RejectUnknownKeys(policy, {"log_retention_days"}, "retention_policy", problems);
  if (auto days = ReadInt(policy, "log_retention_days", "retention_policy", problems)) {
    if (*days < -1 || *days > 32767) {
      problems->Add("retention_policy.log_retention_days", "must be between -1 and 32767", *days);
    }
  }
}

void CheckIntegrations(const json& integrations, Problems* problems) {
  internal::RejectUnknownKeys(integrations, {"pachyderm", "webhooks"}, "integrations", problems);
  for (const char* key : {"pachyderm", "webhooks"}) {
    if (Has(integrations, key) && !integrations.at(key).is_object()) {
      problems->Add(JoinPath("integrations", key), "must be a map", integrations.at(key));
    }
  }
}

// Sections kept as given (legacy or not interpreted by this master) but checked for shape.
void CheckMapSections(const json& in, json* out, Problems* problems) {
  for (const char* key : {"integrations", "internal", "security", "tensorboard_storage",
                          "retention_policy", "pbs", "slurm"}) {
    if (Has(in, key) && !in.at(key).is_object()) problems->Add(key, "must be a map", in.at(key));
  }
  auto section = [&](const char* key) -> const json* {
    return Has(in, key) && in.at(key).is_object() ? &in.at(key) : nullptr;
  };
  if (const json* s = section("security")) CheckSecurity(*s, problems);
  if (const json* s = section("retention_policy")) CheckRetentionPolicy(*s, problems);
  if (const json* s = section("integrations")) CheckIntegrations(*s, problems);
  if (const json* s = section("slurm")) CheckHpcSection(*s, "slurm", "sbatch_args", problems);
  if (const json* s = section("pbs")) CheckHpcSection(*s, "pbs", "pbsbatch_args", problems);
  if (!Has(in, "data")) {
    (*out)["data"] = json::object();
  } else if (!in.at("data").is_object()) {
    problems->Add("data", "must be a map", in.at("data"));
  }
}

// The global batch size, when hyperparameters.global_batch_size is a constant integer > 0.
std::optional<int64_t> GlobalBatchSize(const Hyperparameters& hps) {
  auto it = hps.find("global_batch_size");
  if (it == hps.end() || it->second.type != Hyperparameter::Type::kConst) return std::nullopt;
  const json& v = it->second.val;
  if (!v.is_number_integer() || v.get<int64_t>() < 1) return std::nullopt;
  return v.get<int64_t>();
}

// Searcher lengths in epochs convert to records and batches only through records_per_epoch
// (0.13-0.37). min_validation_period and min_checkpoint_period in epochs need no conversion:
// the training loop counts epochs itself, so Determined accepts them without it.
void RequireRecordsPerEpoch(const ExperimentConfig& cfg, Problems* problems) {
  if (cfg.records_per_epoch > 0) return;
  const std::pair<const char*, std::optional<Length>> lengths[] = {
      {"searcher.max_length", cfg.searcher.max_length},
      {"searcher.budget", cfg.searcher.budget},
      {"searcher.length_per_round", cfg.searcher.length_per_round}};
  for (const auto& [path, length] : lengths) {
    if (length && length->unit == Length::Unit::kEpochs && length->value > 0) {
      problems->Add("records_per_epoch",
                    std::string("required (> 0) when ") + path + " is in epochs");
    }
  }
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
    if (*bps < 1)
      problems->Add("batches_per_step", "must be >= 1", *bps);
    else
      batches_per_step = *bps;
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
  const json& tcd = defaults.task_container_defaults;
  cfg.resources = internal::ParseResources(
      ResourcesWithTaskDefaults(FieldOrNull(in, "resources"), tcd), &out["resources"], problems);
  out["bind_mounts"] =
      internal::ParseBindMounts(MergeBindMounts(FieldOrNull(in, "bind_mounts"), tcd), problems);
  cfg.bind_mounts = TypedBindMounts(out["bind_mounts"]);
  cfg.environment = internal::ParseEnvironment(FieldOrNull(in, "environment"), tcd,
                                               &out["environment"], problems);
  out["optimizations"] = internal::ParseOptimizations(FieldOrNull(in, "optimizations"), problems);
  cfg.optimizations = out["optimizations"];
  out["profiling"] = internal::ParseProfiling(FieldOrNull(in, "profiling"), problems);
  cfg.profiling = out["profiling"];
  out["data_layer"] = internal::ParseDataLayer(FieldOrNull(in, "data_layer"), problems);
  cfg.data_layer = out["data_layer"];
  out["log_policies"] = internal::ParseLogPolicies(
      FieldOrNull(in, "log_policies"),
      tcd.is_object() ? FieldOrNull(tcd, "log_policies") : json(nullptr), problems);
  cfg.log_policies = out["log_policies"];
  cfg.preemption_timeout =
      ReadIntAtLeast(in, "preemption_timeout", 0, defaults.preemption_timeout, &out, problems);
  cfg.global_batch_size = GlobalBatchSize(cfg.hyperparameters);

  cfg.max_restarts = ReadIntAtLeast(in, "max_restarts", 0, kDefaultMaxRestarts, &out, problems);
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
  cfg.scheduling_unit = ReadIntAtLeast(in, "scheduling_unit", 1, batches_per_step, &out, problems);
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
  CheckMapSections(in, &out, problems);
  if (out["data"].is_object()) cfg.data = out["data"];
  RequireRecordsPerEpoch(cfg, problems);
  // The step-era name is folded into scheduling_unit and the converted lengths above.
  out.erase("batches_per_step");

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
