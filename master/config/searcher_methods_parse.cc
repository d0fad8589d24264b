#include "master/config/searcher_methods_parse.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "master/config/length_parse.h"

namespace det::master::config::internal {

namespace {

using nlohmann::json;

constexpr std::string_view kPath = "searcher";
constexpr int64_t kDefaultMaxConcurrentTrials = 16;
constexpr int64_t kDefaultDivisor = 4;
constexpr int64_t kDefaultMaxRungs = 5;
constexpr int64_t kMaxEiCandidates = 1024;

struct MethodFields {
  std::string_view method;
  std::vector<std::string_view> fields;
};

const std::vector<std::string_view> kCommonFields = {
    "name",       "metric",          "smaller_is_better",
    "max_length", "source_trial_id", "source_checkpoint_uuid"};

const std::vector<MethodFields>& Methods() {
  static const std::vector<MethodFields> kMethods = {
      {"single", {"max_steps"}},
      {"random", {"max_trials", "max_concurrent_trials", "max_steps", "stopping"}},
      {"grid", {"max_concurrent_trials", "max_steps"}},
      {"adaptive_asha",
       {"max_trials", "max_concurrent_trials", "time_metric", "max_time", "mode", "divisor",
        "max_rungs", "bracket_rungs", "stop_once", "target_trial_steps", "max_steps", "sampler",
        "n_startup_trials", "n_ei_candidates", "prior_weight", "consider_magic_clip",
        "consider_endpoints", "constant_liar"}},
      {"async_halving",
       {"num_rungs", "max_trials", "max_concurrent_trials", "time_metric", "max_time", "divisor",
        "stop_once", "target_trial_steps", "max_steps", "sampler", "n_startup_trials",
        "n_ei_candidates", "prior_weight", "consider_magic_clip", "consider_endpoints",
        "constant_liar"}},
      {"adaptive",
       {"budget", "mode", "divisor", "max_rungs", "bracket_rungs", "train_stragglers",
        "max_concurrent_trials", "target_trial_steps", "step_budget"}},
      {"adaptive_simple",
       {"max_trials", "mode", "divisor", "max_rungs", "max_concurrent_trials", "max_steps"}},
      {"pbt",
       {"population_size", "num_rounds", "length_per_round", "replace_function", "explore_function",
        "steps_per_round"}},
      {"sync_halving",
       {"num_rungs", "budget", "divisor", "train_stragglers", "target_trial_steps", "step_budget"}},
      {"custom", {"unit"}},
      {"tpe",
       {"max_trials", "max_concurrent_trials", "n_startup_trials", "n_ei_candidates",
        "prior_weight", "consider_magic_clip", "consider_endpoints", "constant_liar", "stopping"}},
  };
  return kMethods;
}

bool Takes(std::string_view method, std::string_view field) {
  for (const MethodFields& m : Methods()) {
    if (m.method == method) {
      return std::find(m.fields.begin(), m.fields.end(), field) != m.fields.end();
    }
  }
  return false;
}

bool TakenByAnyMethod(std::string_view field) {
  for (const MethodFields& m : Methods()) {
    if (std::find(m.fields.begin(), m.fields.end(), field) != m.fields.end()) return true;
  }
  return false;
}

std::string Required(const std::string& method) { return "required for searcher '" + method + "'"; }

// An integer field >= `min`; writes `fallback` into `out` when absent (unless fallback < 0).
int64_t IntField(const json& in, const char* key, int64_t min, int64_t fallback, json* out,
                 Problems* problems) {
  int64_t value = fallback;
  if (auto v = ReadInt(in, key, kPath, problems)) {
    if (*v < min) {
      problems->Add(JoinPath(kPath, key),
                    min == 1 ? std::string("must be > 0") : "must be >= " + std::to_string(min),
                    *v);
    }
    value = *v;
  } else if (fallback >= 0 && !Has(in, key)) {
    (*out)[key] = fallback;
  }
  return value;
}

void ParseMode(const json& in, json* out, SearcherConfig* cfg, Problems* problems) {
  if (auto mode = ReadString(in, "mode", kPath, problems)) {
    if (*mode != "aggressive" && *mode != "standard" && *mode != "conservative") {
      problems->Add(JoinPath(kPath, "mode"), "must be one of aggressive, standard, conservative",
                    *mode);
    }
    cfg->mode = *mode;
  } else if (!Has(in, "mode")) {
    (*out)["mode"] = cfg->mode;
  }
}

void ParseDivisor(const json& in, json* out, SearcherConfig* cfg, Problems* problems) {
  if (auto divisor = ReadNumber(in, "divisor", kPath, problems)) {
    if (!(*divisor > 1) || !std::isfinite(*divisor)) {
      problems->Add(JoinPath(kPath, "divisor"), "must be > 1", in.at("divisor"));
    }
    cfg->divisor = *divisor;
  } else if (!Has(in, "divisor")) {
    (*out)["divisor"] = kDefaultDivisor;
  }
}

void ParseBracketRungs(const json& in, json* out, SearcherConfig* cfg, Problems* problems) {
  if (!Has(in, "bracket_rungs")) {
    (*out)["bracket_rungs"] = json::array();
    return;
  }
  const json& rungs = in.at("bracket_rungs");
  if (!rungs.is_array()) {
    problems->Add(JoinPath(kPath, "bracket_rungs"), "must be a list of integers", rungs);
    return;
  }
  for (size_t i = 0; i < rungs.size(); ++i) {
    std::string path = JoinPath(kPath, "bracket_rungs") + "[" + std::to_string(i) + "]";
    if (!rungs[i].is_number_integer() || rungs[i].get<int64_t>() < 1) {
      problems->Add(path, "must be an integer > 0", rungs[i]);
      continue;
    }
    cfg->bracket_rungs.push_back(rungs[i].get<int64_t>());
  }
}

bool BoolField(const json& in, const char* key, bool fallback, json* out, Problems* problems) {
  auto v = ReadBool(in, key, kPath, problems);
  if (!v && !Has(in, key)) (*out)[key] = fallback;
  return v.value_or(fallback);
}

// max_time + time_metric (0.38) or max_length (0.13-0.37) for adaptive_asha / async_halving.
void ParseTimeBudget(const json& in, const json& out, SearcherConfig* cfg, Problems* problems) {
  if (auto metric = ReadString(in, "time_metric", kPath, problems)) {
    if (metric->empty()) problems->Add(JoinPath(kPath, "time_metric"), "must not be empty");
    cfg->time_metric = *metric;
  }
  if (auto max_time = ReadInt(in, "max_time", kPath, problems)) {
    if (*max_time < 1) problems->Add(JoinPath(kPath, "max_time"), "must be > 0", *max_time);
    cfg->max_time = *max_time;
  }
  bool has_metric = Has(in, "time_metric"), has_time = Has(in, "max_time");
  if (has_metric != has_time) {
    problems->Add(JoinPath(kPath, has_metric ? "max_time" : "time_metric"),
                  "time_metric and max_time must be given together");
  } else if (!has_metric && !Has(out, "max_length")) {
    problems->Add(JoinPath(kPath, "max_time"),
                  Required(cfg->name) + " (with time_metric), unless max_length is given");
  }
}

double FractionField(const json& obj, const char* key, const std::string& path, double max,
                     Problems* problems) {
  if (!Has(obj, key)) {
    problems->Add(JoinPath(path, key), "required for searcher 'pbt'");
    return 0;
  }
  auto v = ReadNumber(obj, key, path, problems);
  if (!v) return 0;
  if (!(*v >= 0 && *v <= max)) {
    problems->Add(JoinPath(path, key),
                  "must be between 0 and " + std::string(max == 1 ? "1" : "0.5"), obj.at(key));
  }
  return *v;
}

const json* SubMap(const json& in, const char* key, Problems* problems) {
  std::string path = JoinPath(kPath, key);
  if (!Has(in, key)) {
    problems->Add(path, "required for searcher 'pbt'");
    return nullptr;
  }
  const json& v = in.at(key);
  if (!v.is_object()) {
    problems->Add(path, "must be a map", v);
    return nullptr;
  }
  return &v;
}

void ParsePbt(const json& in, const json& out, SearcherConfig* cfg, Problems* problems) {
  json ignored;
  for (const char* key : {"population_size", "num_rounds"}) {
    if (!Has(in, key)) problems->Add(JoinPath(kPath, key), Required("pbt"));
  }
  cfg->population_size = IntField(in, "population_size", 1, -1, &ignored, problems);
  cfg->num_rounds = IntField(in, "num_rounds", 1, -1, &ignored, problems);
  if (!Has(out, "length_per_round")) {
    problems->Add(JoinPath(kPath, "length_per_round"), Required("pbt"));
  } else {
    cfg->length_per_round =
        ParseLength(out.at("length_per_round"), JoinPath(kPath, "length_per_round"),
                    /*allow_unitless=*/true, problems);
  }
  if (const json* replace = SubMap(in, "replace_function", problems)) {
    std::string path = JoinPath(kPath, "replace_function");
    RejectUnknownKeys(*replace, {"truncate_fraction"}, path, problems);
    cfg->truncate_fraction = FractionField(*replace, "truncate_fraction", path, 0.5, problems);
  }
  if (const json* explore = SubMap(in, "explore_function", problems)) {
    std::string path = JoinPath(kPath, "explore_function");
    RejectUnknownKeys(*explore, {"resample_probability", "perturb_factor"}, path, problems);
    cfg->resample_probability = FractionField(*explore, "resample_probability", path, 1, problems);
    cfg->perturb_factor = FractionField(*explore, "perturb_factor", path, 1, problems);
  }
}

// Optuna's TPESampler names and defaults, written into `out` (the merged config for tpe; for an
// ASHA searcher's `sampler: tpe` they are only checked, so its merged config stays as it was).
void ParseTpeKnobs(const json& in, json* out, Problems* problems) {
  IntField(in, "n_startup_trials", 0, 10, out, problems);
  // Each candidate is scored against every trial, on the runtime loop: a bound keeps one
  // user's search from holding it for everyone.
  int64_t candidates = IntField(in, "n_ei_candidates", 1, 24, out, problems);
  if (candidates > kMaxEiCandidates) {
    problems->Add(JoinPath(kPath, "n_ei_candidates"),
                  "must be <= " + std::to_string(kMaxEiCandidates), candidates);
  }
  if (!Has(in, "prior_weight")) {
    (*out)["prior_weight"] = 1.0;
  } else if (!in.at("prior_weight").is_number() || !(in.at("prior_weight").get<double>() > 0)) {
    problems->Add(JoinPath(kPath, "prior_weight"), "must be a number > 0", in.at("prior_weight"));
  }
  BoolField(in, "consider_magic_clip", true, out, problems);
  BoolField(in, "consider_endpoints", false, out, problems);
  BoolField(in, "constant_liar", false, out, problems);
}

void ParseTpe(const json& in, json* out, Problems* problems) {
  if (!Has(*out, "max_length")) problems->Add(JoinPath(kPath, "max_length"), Required("tpe"));
  ParseTpeKnobs(in, out, problems);
}

// `stopping: {type: median, check_every, n_startup_trials, n_warmup_steps, interval_steps,
// n_min_trials}`: Optuna's MedianPruner fields; check_every is a length in max_length's unit.
void ParseStopping(const json& in, const json& out, Problems* problems) {
  const json* stop = SubMap(in, "stopping", problems);
  if (stop == nullptr) return;
  std::string path = JoinPath(kPath, "stopping");
  RejectUnknownKeys(*stop,
                    {"type", "check_every", "n_startup_trials", "n_warmup_steps", "interval_steps",
                     "n_min_trials"},
                    path, problems);
  if (auto type = ReadString(*stop, "type", path, problems)) {
    if (*type != "median") problems->Add(JoinPath(path, "type"), "must be median", *type);
  }
  if (!Has(*stop, "check_every")) {
    problems->Add(JoinPath(path, "check_every"), "required (a length, as max_length)");
  } else {
    std::optional<Length> every =
        ParseLength(stop->at("check_every"), JoinPath(path, "check_every"),
                    /*allow_unitless=*/true, problems);
    if (every && every->value == 0) {
      problems->Add(JoinPath(path, "check_every"), "must be > 0", stop->at("check_every"));
    }
    if (every && Has(out, "max_length") && out.at("max_length").is_object() &&
        stop->at("check_every").is_object() &&
        out.at("max_length").begin().key() != stop->at("check_every").begin().key()) {
      problems->Add(JoinPath(path, "check_every"), "must be in max_length's unit",
                    stop->at("check_every"));
    }
  }
  if (!Has(out, "max_length")) {
    problems->Add(JoinPath(kPath, "max_length"), "required with searcher.stopping");
  }
  auto non_negative = [&](const char* key, int64_t min) {
    if (!Has(*stop, key)) return;
    auto v = ReadInt(*stop, key, path, problems);
    if (v && *v < min) {
      problems->Add(JoinPath(path, key), min == 1 ? "must be > 0" : "must be >= 0", *v);
    }
  };
  non_negative("n_startup_trials", 0);
  non_negative("n_warmup_steps", 0);
  non_negative("interval_steps", 1);
  non_negative("n_min_trials", 1);
}

void ParseSampler(const json& in, Problems* problems) {
  std::string sampler = "random";
  if (auto s = ReadString(in, "sampler", kPath, problems)) sampler = *s;
  if (sampler != "random" && sampler != "tpe") {
    problems->Add(JoinPath(kPath, "sampler"), "must be one of random, tpe", sampler);
  }
  json ignored = json::object();
  ParseTpeKnobs(in, &ignored, problems);
}

void ParseBudget(const json& out, SearcherConfig* cfg, Problems* problems) {
  if (!Has(out, "budget")) {
    problems->Add(JoinPath(kPath, "budget"), Required(cfg->name));
    return;
  }
  cfg->budget = ParseLength(out.at("budget"), JoinPath(kPath, "budget"),
                            /*allow_unitless=*/true, problems);
  // sync_halving's budget is a positive length in Determined's schema; adaptive's may be 0.
  if (cfg->name == "sync_halving") {
    RequirePositiveLength(cfg->budget, out.at("budget"), "budget", problems);
  }
}

}  // namespace

void RequirePositiveLength(const std::optional<Length>& length, const nlohmann::json& value,
                           std::string_view key, Problems* problems) {
  // A length map counts a positive amount of training; the unitless integer may be 0.
  if (length && length->unit != Length::Unit::kUnitless && length->value == 0) {
    problems->Add(JoinPath(kPath, key), "must be > 0 when given as {batches|records|epochs}",
                  value);
  }
}

std::vector<std::string_view> SearcherMethodFields(std::string_view method) {
  for (const MethodFields& m : Methods()) {
    if (m.method != method) continue;
    std::vector<std::string_view> all = kCommonFields;
    all.insert(all.end(), m.fields.begin(), m.fields.end());
    return all;
  }
  return {};
}

void ParseSearcherMethod(const nlohmann::json& in, nlohmann::json* out, SearcherConfig* cfg,
                         Problems* problems) {
  const std::string& name = cfg->name;
  if (name.empty()) return;
  for (const auto& [key, value] : in.items()) {
    if (std::find(kCommonFields.begin(), kCommonFields.end(), key) != kCommonFields.end()) {
      continue;
    }
    // Fields of no method at all are reported once, as plain unknown fields, by the caller.
    if (TakenByAnyMethod(key) && !Takes(name, key)) {
      problems->Add(JoinPath(kPath, key), "unknown field for searcher '" + name + "'");
    }
  }

  if (Takes(name, "max_concurrent_trials") && !Has(in, "max_concurrent_trials")) {
    (*out)["max_concurrent_trials"] = kDefaultMaxConcurrentTrials;
  }
  if (Takes(name, "mode")) ParseMode(in, out, cfg, problems);
  if (Takes(name, "divisor")) ParseDivisor(in, out, cfg, problems);
  if (Takes(name, "max_rungs")) {
    cfg->max_rungs = IntField(in, "max_rungs", 1, kDefaultMaxRungs, out, problems);
  }
  if (Takes(name, "bracket_rungs")) ParseBracketRungs(in, out, cfg, problems);
  if (Takes(name, "stop_once")) cfg->stop_once = BoolField(in, "stop_once", false, out, problems);
  if (Takes(name, "train_stragglers")) {
    cfg->train_stragglers = BoolField(in, "train_stragglers", true, out, problems);
  }
  if (Takes(name, "num_rungs")) {
    if (!Has(in, "num_rungs")) problems->Add(JoinPath(kPath, "num_rungs"), Required(name));
    json ignored;
    cfg->num_rungs = IntField(in, "num_rungs", 1, -1, &ignored, problems);
  }
  if (Takes(name, "time_metric")) ParseTimeBudget(in, *out, cfg, problems);
  if (Takes(name, "budget")) ParseBudget(*out, cfg, problems);

  if (name == "adaptive" || name == "adaptive_simple" || name == "sync_halving") {
    if (!Has(*out, "max_length")) problems->Add(JoinPath(kPath, "max_length"), Required(name));
  }
  if (name == "pbt") ParsePbt(in, *out, cfg, problems);
  if (name == "tpe") ParseTpe(in, out, problems);
  if (Takes(name, "sampler")) ParseSampler(in, problems);
  if (Takes(name, "stopping") && Has(in, "stopping")) ParseStopping(in, *out, problems);
  if (name == "custom") {
    if (auto unit = ReadString(in, "unit", kPath, problems)) {
      if (*unit != "batches" && *unit != "records" && *unit != "epochs") {
        problems->Add(JoinPath(kPath, "unit"), "must be one of batches, records, epochs", *unit);
      }
    }
  }
}

}  // namespace det::master::config::internal
