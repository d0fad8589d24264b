// MakeTestModeConfig: the config `det experiment create --test` submits (reference §9).

#include <algorithm>
#include <cmath>
#include <random>

#include "master/config/experiment_config.h"

namespace det::master::config {

namespace {

using nlohmann::json;

// A finite number within +-2^61 (so that integer casts and range widths stay defined).
double Number(const json& v, double fallback) {
  constexpr double kLimit = 2.3e18;
  if (!v.is_number()) return fallback;
  double d = v.get<double>();
  if (!std::isfinite(d)) return fallback;
  return std::clamp(d, -kLimit, kLimit);
}

// One value drawn from a hyperparameter's range (the user's form: bare, typed or nested).
json SampleOne(const json& hp, std::mt19937_64& rng) {
  if (!hp.is_object()) return hp;
  if (!hp.contains("type")) {
    json nested = json::object();
    for (const auto& [name, child] : hp.items()) nested[name] = SampleOne(child, rng);
    return nested;
  }
  std::string type = hp["type"].is_string() ? hp["type"].get<std::string>() : "";
  double lo = Number(hp.value("minval", json()), 0);
  double hi = Number(hp.value("maxval", json()), lo);
  if (hi < lo) hi = lo;
  if (type == "const") return hp.value("val", json());
  if (type == "categorical") {
    const json& vals = hp.value("vals", json());
    if (!vals.is_array() || vals.empty()) return nullptr;
    return vals[std::uniform_int_distribution<size_t>(0, vals.size() - 1)(rng)];
  }
  if (type == "int") {
    auto a = static_cast<int64_t>(std::ceil(lo)), b = static_cast<int64_t>(std::floor(hi));
    if (b < a) b = a;
    return std::uniform_int_distribution<int64_t>(a, b)(rng);
  }
  double x = std::uniform_real_distribution<double>(lo, std::nextafter(hi, hi + 1))(rng);
  if (type == "log") return std::pow(Number(hp.value("base", json()), 10), x);
  return x;
}

}  // namespace

nlohmann::json MakeTestModeConfig(const nlohmann::json& config, uint64_t seed) {
  json out = config.is_object() ? config : json::object();
  std::mt19937_64 rng(seed);

  json searcher = json::object();
  const json& old = out.value("searcher", json::object());
  searcher["name"] = "single";
  if (old.is_object()) {
    for (const char* key : {"metric", "smaller_is_better", "source_trial_id",
                            "source_checkpoint_uuid"}) {
      if (old.contains(key)) searcher[key] = old.at(key);
    }
  }
  searcher["max_length"] = {{"batches", 1}};
  out["searcher"] = searcher;

  out.erase("batches_per_step");
  out["scheduling_unit"] = 1;
  out["min_validation_period"] = {{"batches", 1}};
  out["max_restarts"] = 0;
  if (out.contains("min_checkpoint_period") && out["min_checkpoint_period"].is_number_integer()) {
    // A legacy step count would otherwise convert with the default 100 batches per step.
    out["min_checkpoint_period"] = {{"batches", out["min_checkpoint_period"]}};
  }

  json storage = out.value("checkpoint_storage", json());
  if (!storage.is_object()) storage = json::object();
  storage["save_experiment_best"] = 0;
  storage["save_trial_best"] = 0;
  storage["save_trial_latest"] = 0;
  out["checkpoint_storage"] = storage;

  if (out.contains("hyperparameters") && out["hyperparameters"].is_object()) {
    json fixed = json::object();
    for (const auto& [name, hp] : out["hyperparameters"].items()) fixed[name] = SampleOne(hp, rng);
    // Bare values of objects would read as nested groups again; constants keep their shape.
    for (auto& [name, value] : fixed.items()) {
      if (value.is_object() || value.is_array()) value = json{{"type", "const"}, {"val", value}};
    }
    out["hyperparameters"] = fixed;
  }
  std::string description = out.value("description", json()).is_string()
                                ? out["description"].get<std::string>()
                                : std::string();
  out["description"] = "[test-mode] " + description;
  return out;
}

}  // namespace det::master::config
