#include "master/config/searcher_config_parse.h"

#include <algorithm>
#include <string>
#include <vector>

#include "master/config/length_parse.h"
#include "master/config/searcher_methods_parse.h"

namespace det::master::config::internal {

namespace {

using nlohmann::json;

constexpr std::string_view kPath = "searcher";
constexpr int64_t kDefaultMaxConcurrentTrials = 16;
constexpr int64_t kMaxAdaptiveSimpleTrials = 2000;

const std::vector<std::string_view> kNames = {
    "single",   "random",          "grid", "adaptive_asha", "async_halving",
    "adaptive", "adaptive_simple", "pbt",  "custom",        "sync_halving", "tpe"};

// The union of every searcher's fields (current, 0.13-0.37 and step-era names).
const std::vector<std::string_view> kKnownFields = {"name",
                                                    "metric",
                                                    "smaller_is_better",
                                                    "max_length",
                                                    "max_trials",
                                                    "max_concurrent_trials",
                                                    "source_trial_id",
                                                    "source_checkpoint_uuid",
                                                    "time_metric",
                                                    "max_time",
                                                    "mode",
                                                    "divisor",
                                                    "max_rungs",
                                                    "bracket_rungs",
                                                    "stop_once",
                                                    "num_rungs",
                                                    "budget",
                                                    "train_stragglers",
                                                    "population_size",
                                                    "num_rounds",
                                                    "length_per_round",
                                                    "replace_function",
                                                    "explore_function",
                                                    "unit",
                                                    "max_steps",
                                                    "target_trial_steps",
                                                    "step_budget",
                                                    "steps_per_round",
                                                    "n_startup_trials",
                                                    "n_ei_candidates",
                                                    "prior_weight",
                                                    "consider_magic_clip",
                                                    "consider_endpoints",
                                                    "constant_liar",
                                                    "sampler",
                                                    "stopping"};

struct LegacySteps {
  std::string_view legacy;
  std::string_view modern;
};
constexpr LegacySteps kLegacySteps[] = {{"max_steps", "max_length"},
                                        {"target_trial_steps", "max_length"},
                                        {"step_budget", "budget"},
                                        {"steps_per_round", "length_per_round"}};

bool NeedsMaxTrials(const std::string& name) {
  return name == "random" || name == "adaptive_asha" || name == "async_halving" ||
         name == "adaptive_simple" || name == "tpe";
}

// Rewrites legacy step counts in `*out` into batch lengths.
void ConvertLegacySteps(const json& in, int64_t batches_per_step, json* out, Problems* problems) {
  for (const LegacySteps& l : kLegacySteps) {
    if (!Has(in, l.legacy)) continue;
    std::string legacy(l.legacy), modern(l.modern);
    out->erase(legacy);
    if (Has(in, l.modern)) {
      problems->Add(JoinPath(kPath, legacy), "cannot be combined with " + modern);
      continue;
    }
    auto steps = ReadInt(in, legacy, kPath, problems);
    if (!steps) continue;
    if (*steps < 0) {
      problems->Add(JoinPath(kPath, legacy), "must be >= 0", in.at(legacy));
      continue;
    }
    int64_t batches = 0;
    if (__builtin_mul_overflow(*steps, batches_per_step, &batches)) {
      problems->Add(JoinPath(kPath, legacy), "out of range", in.at(legacy));
      continue;
    }
    (*out)[modern] = json{{"batches", batches}};
  }
}

bool TakesLengthMapOnly(const std::string& name) {
  return name == "async_halving" || name == "adaptive" || name == "adaptive_simple" ||
         name == "sync_halving";
}

}  // namespace

SearcherConfig ParseSearcher(const nlohmann::json& in, int64_t batches_per_step,
                             nlohmann::json* defaulted, Problems* problems) {
  SearcherConfig cfg;
  if (in.is_null()) {
    problems->Add(kPath, "required");
    *defaulted = json::object();
    return cfg;
  }
  if (!in.is_object()) {
    problems->Add(kPath, "must be a map", in);
    *defaulted = in;
    return cfg;
  }
  json& out = *defaulted;
  out = in;
  ConvertLegacySteps(in, batches_per_step, &out, problems);

  if (!Has(in, "name")) {
    problems->Add(JoinPath(kPath, "name"), "required");
  } else if (auto name = ReadString(in, "name", kPath, problems)) {
    if (std::find(kNames.begin(), kNames.end(), *name) == kNames.end()) {
      problems->Add(JoinPath(kPath, "name"),
                    "must be one of single, random, grid, adaptive_asha, async_halving, "
                    "adaptive, adaptive_simple, pbt, sync_halving, custom",
                    in.at("name"));
    } else {
      cfg.name = *name;
    }
  }
  // Fields of no searcher are unknown; fields of another searcher are checked per method below.
  RejectUnknownKeys(in, kKnownFields, kPath, problems);

  if (!Has(in, "metric")) {
    problems->Add(JoinPath(kPath, "metric"), "required");
  } else if (auto metric = ReadString(in, "metric", kPath, problems)) {
    if (metric->empty()) problems->Add(JoinPath(kPath, "metric"), "must not be empty");
    cfg.metric = *metric;
  }

  cfg.smaller_is_better = ReadBool(in, "smaller_is_better", kPath, problems).value_or(true);
  out["smaller_is_better"] = cfg.smaller_is_better;

  if (Has(out, "max_length")) {
    // A bare integer (Core API, unitless) is only for the searchers that Determined 0.38 still
    // runs; the older searchers take a length map.
    bool unitless_ok = !TakesLengthMapOnly(cfg.name);
    cfg.max_length =
        ParseLength(out.at("max_length"), JoinPath(kPath, "max_length"), unitless_ok, problems);
    RequirePositiveLength(cfg.max_length, out.at("max_length"), "max_length", problems);
  }

  auto max_trials = ReadInt(in, "max_trials", kPath, problems);
  if (max_trials) {
    if (*max_trials < 1) {
      problems->Add(JoinPath(kPath, "max_trials"), "must be > 0", in.at("max_trials"));
    } else if (cfg.name == "adaptive_simple" && *max_trials > kMaxAdaptiveSimpleTrials) {
      problems->Add(JoinPath(kPath, "max_trials"), "must be <= 2000 for searcher 'adaptive_simple'",
                    in.at("max_trials"));
    }
    cfg.max_trials = *max_trials;
  } else if (NeedsMaxTrials(cfg.name) && !Has(in, "max_trials")) {
    problems->Add(JoinPath(kPath, "max_trials"), "required for searcher '" + cfg.name + "'");
  }

  auto mct = ReadInt(in, "max_concurrent_trials", kPath, problems);
  if (mct && *mct < 0) {
    problems->Add(JoinPath(kPath, "max_concurrent_trials"), "must be >= 0",
                  in.at("max_concurrent_trials"));
  }
  cfg.max_concurrent_trials = mct.value_or(kDefaultMaxConcurrentTrials);

  // `single` is a random search of exactly one trial.
  if (cfg.name == "single") {
    cfg.max_trials = 1;
    cfg.max_concurrent_trials = 1;
  }

  cfg.source_trial_id = ReadInt(in, "source_trial_id", kPath, problems);
  cfg.source_checkpoint_uuid = ReadString(in, "source_checkpoint_uuid", kPath, problems);
  if (Has(in, "source_trial_id") && Has(in, "source_checkpoint_uuid")) {
    problems->Add(kPath, "at most one of source_trial_id and source_checkpoint_uuid may be set");
  }
  if (cfg.source_trial_id && *cfg.source_trial_id < 1) {
    problems->Add(JoinPath(kPath, "source_trial_id"), "must be > 0", *cfg.source_trial_id);
  }
  // Determined's merged config always carries both, null when unset (its web UI's decoders
  // require them).
  for (const char* key : {"source_trial_id", "source_checkpoint_uuid"}) {
    if (!out.contains(key)) out[key] = nullptr;
  }
  ParseSearcherMethod(in, &out, &cfg, problems);
  return cfg;
}

}  // namespace det::master::config::internal
