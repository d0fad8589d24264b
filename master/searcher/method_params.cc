#include "master/searcher/method_params.h"

#include <cmath>

namespace det::master::searcher {

namespace {

using nlohmann::json;

const json* Field(const json& searcher, const char* name) {
  if (!searcher.is_object()) return nullptr;
  auto it = searcher.find(name);
  if (it == searcher.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Path(const std::string& name) { return "searcher." + name; }

Status ReadInt(const json& s, const char* name, int64_t* out) {
  const json* f = Field(s, name);
  if (!f) return Status::Ok();
  if (f->is_number_integer()) {
    *out = f->get<int64_t>();
  } else if (f->is_number_float() && std::floor(f->get<double>()) == f->get<double>() &&
             std::fabs(f->get<double>()) < 9e15) {
    *out = static_cast<int64_t>(f->get<double>());
  } else {
    return InvalidArgument(Path(name) + ": must be an integer, got " + f->dump());
  }
  return Status::Ok();
}

Status ReadDouble(const json& s, const char* name, double* out) {
  const json* f = Field(s, name);
  if (!f) return Status::Ok();
  if (!f->is_number()) return InvalidArgument(Path(name) + ": must be a number, got " + f->dump());
  *out = f->get<double>();
  return Status::Ok();
}

Status ReadBool(const json& s, const char* name, bool* out) {
  const json* f = Field(s, name);
  if (!f) return Status::Ok();
  if (!f->is_boolean())
    return InvalidArgument(Path(name) + ": must be a boolean, got " + f->dump());
  *out = f->get<bool>();
  return Status::Ok();
}

Status ReadString(const json& s, const char* name, std::string* out) {
  const json* f = Field(s, name);
  if (!f) return Status::Ok();
  if (!f->is_string()) return InvalidArgument(Path(name) + ": must be a string, got " + f->dump());
  *out = f->get<std::string>();
  return Status::Ok();
}

// A length: a non-negative integer or a one-key map {"batches"|"records"|"epochs": n}.
Status ReadLength(const json& s, const char* name, std::optional<uint64_t>* out) {
  const json* f = Field(s, name);
  if (!f) return Status::Ok();
  const json* v = f;
  if (f->is_object()) {
    if (f->size() != 1) {
      return InvalidArgument(Path(name) + ": must name exactly one unit, got " + f->dump());
    }
    v = &f->begin().value();
  }
  if (!v->is_number_integer() || v->get<int64_t>() < 0) {
    return InvalidArgument(Path(name) + ": must be a non-negative integer length, got " +
                           f->dump());
  }
  *out = static_cast<uint64_t>(v->get<int64_t>());
  return Status::Ok();
}

Status Require(bool present, const std::string& field, const std::string& method) {
  if (present) return Status::Ok();
  return InvalidArgument(Path(field) + ": required for searcher '" + method + "'");
}

}  // namespace

Result<MethodParams> ReadMethodParams(const config::ExperimentConfig& config) {
  MethodParams p;
  const config::SearcherConfig& sc = config.searcher;
  p.name = sc.name;
  p.metric = sc.metric;
  p.smaller_is_better = sc.smaller_is_better;
  if (sc.max_length) p.max_length = sc.max_length->value;
  p.max_trials = sc.max_trials;
  p.max_concurrent_trials = sc.max_concurrent_trials;
  const json empty = json::object();
  const json& s = config.defaulted.is_object() && config.defaulted.contains("searcher")
                      ? config.defaulted.at("searcher")
                      : empty;

  DET_RETURN_IF_ERROR(ReadString(s, "mode", &p.mode));
  DET_RETURN_IF_ERROR(ReadDouble(s, "divisor", &p.divisor));
  int64_t max_rungs = p.max_rungs, num_rungs = 0, population = 0, rounds = 0;
  DET_RETURN_IF_ERROR(ReadInt(s, "max_rungs", &max_rungs));
  DET_RETURN_IF_ERROR(ReadInt(s, "num_rungs", &num_rungs));
  DET_RETURN_IF_ERROR(ReadBool(s, "stop_once", &p.stop_once));
  DET_RETURN_IF_ERROR(ReadBool(s, "train_stragglers", &p.train_stragglers));
  DET_RETURN_IF_ERROR(ReadString(s, "time_metric", &p.time_metric));
  if (const json* f = Field(s, "max_time")) {
    if (!f->is_number() || f->get<double>() <= 0) {
      return InvalidArgument("searcher.max_time: must be a number > 0, got " + f->dump());
    }
    p.max_time = f->get<double>();
  }
  if (const json* f = Field(s, "bracket_rungs")) {
    if (!f->is_array()) return InvalidArgument("searcher.bracket_rungs: must be a list");
    for (const json& r : *f) {
      if (!r.is_number_integer() || r.get<int64_t>() < 1 || r.get<int64_t>() > 64) {
        return InvalidArgument(
            "searcher.bracket_rungs: each entry must be an integer in [1, 64], "
            "got " +
            r.dump());
      }
      p.bracket_rungs.push_back(static_cast<int>(r.get<int64_t>()));
    }
  }
  if (const json* stop = Field(s, "stopping")) {
    if (!stop->is_object()) return InvalidArgument("searcher.stopping: must be a map");
    std::string type = "median";
    if (const json* t = Field(*stop, "type")) {
      if (!t->is_string()) return InvalidArgument("searcher.stopping.type: must be a string");
      type = t->get<std::string>();
    }
    if (type != "median") {
      return InvalidArgument("searcher.stopping.type: must be median, got '" + type + "'");
    }
    p.median_stopping = true;
    std::optional<uint64_t> every;
    if (!ReadLength(*stop, "check_every", &every).ok() || !every || *every < 1) {
      return InvalidArgument("searcher.stopping.check_every: required, a length > 0");
    }
    p.check_every = *every;
    int64_t warmup = 0, interval = 1;
    if (!ReadInt(*stop, "n_startup_trials", &p.stop_n_startup_trials).ok() ||
        p.stop_n_startup_trials < 0) {
      return InvalidArgument("searcher.stopping.n_startup_trials: must be an integer >= 0");
    }
    if (!ReadInt(*stop, "n_warmup_steps", &warmup).ok() || warmup < 0) {
      return InvalidArgument("searcher.stopping.n_warmup_steps: must be an integer >= 0");
    }
    if (!ReadInt(*stop, "interval_steps", &interval).ok() || interval < 1) {
      return InvalidArgument("searcher.stopping.interval_steps: must be an integer > 0");
    }
    if (!ReadInt(*stop, "n_min_trials", &p.n_min_trials).ok() || p.n_min_trials < 1) {
      return InvalidArgument("searcher.stopping.n_min_trials: must be an integer > 0");
    }
    p.n_warmup_steps = static_cast<uint64_t>(warmup);
    p.interval_steps = static_cast<uint64_t>(interval);
    if (!p.max_length) return InvalidArgument("searcher.max_length: required with stopping");
  }
  DET_RETURN_IF_ERROR(ReadString(s, "sampler", &p.sampler));
  if (p.sampler != "random" && p.sampler != "tpe") {
    return InvalidArgument("searcher.sampler: must be random or tpe, got '" + p.sampler + "'");
  }
  DET_RETURN_IF_ERROR(ReadInt(s, "n_startup_trials", &p.n_startup_trials));
  DET_RETURN_IF_ERROR(ReadInt(s, "n_ei_candidates", &p.n_ei_candidates));
  DET_RETURN_IF_ERROR(ReadDouble(s, "prior_weight", &p.prior_weight));
  DET_RETURN_IF_ERROR(ReadBool(s, "consider_magic_clip", &p.consider_magic_clip));
  DET_RETURN_IF_ERROR(ReadBool(s, "consider_endpoints", &p.consider_endpoints));
  DET_RETURN_IF_ERROR(ReadBool(s, "constant_liar", &p.constant_liar));
  if (p.name == "tpe" || p.sampler == "tpe") {
    if (p.name == "tpe") {
      DET_RETURN_IF_ERROR(Require(p.max_length.has_value(), "max_length", p.name));
      if (*p.max_length < 1) return InvalidArgument("searcher.max_length: must be > 0");
      if (p.max_trials < 1) return InvalidArgument("searcher.max_trials: must be > 0");
    }
    if (p.n_startup_trials < 0) {
      return InvalidArgument("searcher.n_startup_trials: must be >= 0");
    }
    if (p.n_ei_candidates < 1 || p.n_ei_candidates > 1024) {
      return InvalidArgument("searcher.n_ei_candidates: must be in [1, 1024]");
    }
    if (!(p.prior_weight > 0) || !std::isfinite(p.prior_weight)) {
      return InvalidArgument("searcher.prior_weight: must be a number > 0");
    }
  }
  std::optional<uint64_t> budget, lpr;
  DET_RETURN_IF_ERROR(ReadLength(s, "budget", &budget));
  DET_RETURN_IF_ERROR(ReadLength(s, "length_per_round", &lpr));
  DET_RETURN_IF_ERROR(ReadInt(s, "population_size", &population));
  DET_RETURN_IF_ERROR(ReadInt(s, "num_rounds", &rounds));
  std::optional<double> truncate, resample, perturb;
  if (const json* rf = Field(s, "replace_function")) {
    double v = 0;
    if (Field(*rf, "truncate_fraction")) {
      Status st = ReadDouble(*rf, "truncate_fraction", &v);
      if (!st.ok())
        return InvalidArgument("searcher.replace_function.truncate_fraction: must be a number");
      truncate = v;
    }
  }
  if (const json* ef = Field(s, "explore_function")) {
    double v = 0;
    if (Field(*ef, "resample_probability")) {
      if (!ReadDouble(*ef, "resample_probability", &v).ok()) {
        return InvalidArgument("searcher.explore_function.resample_probability: must be a number");
      }
      resample = v;
    }
    if (Field(*ef, "perturb_factor")) {
      if (!ReadDouble(*ef, "perturb_factor", &v).ok()) {
        return InvalidArgument("searcher.explore_function.perturb_factor: must be a number");
      }
      perturb = v;
    }
  }

  const std::string& n = p.name;
  bool asha = n == "adaptive_asha" || n == "async_halving";
  bool sha = n == "adaptive" || n == "adaptive_simple";
  if (asha || sha) {
    if (!(p.divisor > 1) || !std::isfinite(p.divisor)) {
      return InvalidArgument("searcher.divisor: must be > 1, got " + json(p.divisor).dump());
    }
    if (max_rungs < 1 || max_rungs > 64) {
      return InvalidArgument("searcher.max_rungs: must be in [1, 64], got " +
                             std::to_string(max_rungs));
    }
    p.max_rungs = static_cast<int>(max_rungs);
    if (p.mode != "aggressive" && p.mode != "standard" && p.mode != "conservative") {
      return InvalidArgument(
          "searcher.mode: must be one of aggressive, standard, conservative, "
          "got '" +
          p.mode + "'");
    }
    if (asha && p.TimeMode()) {
      // 0.38 style: lengths come from max_time; max_length is not needed.
    } else {
      DET_RETURN_IF_ERROR(Require(p.max_length.has_value(), "max_length", n));
      if (*p.max_length < 1) return InvalidArgument("searcher.max_length: must be > 0");
    }
    if (asha || n == "adaptive_simple") {
      if (p.max_trials < 1) return InvalidArgument("searcher.max_trials: must be > 0");
    }
  }
  if (n == "async_halving") {
    DET_RETURN_IF_ERROR(Require(Field(s, "num_rungs") != nullptr, "num_rungs", n));
    if (num_rungs < 1 || num_rungs > 64) {
      return InvalidArgument("searcher.num_rungs: must be in [1, 64], got " +
                             std::to_string(num_rungs));
    }
    p.num_rungs = static_cast<int>(num_rungs);
  }
  if (n == "adaptive") {
    DET_RETURN_IF_ERROR(Require(budget.has_value(), "budget", n));
    p.budget = *budget;
    if (p.budget < *p.max_length) {
      return InvalidArgument("searcher.budget: must be >= searcher.max_length");
    }
  }
  if (n == "grid") {
    if (p.max_length && *p.max_length < 1) {
      return InvalidArgument("searcher.max_length: must be > 0");
    }
  }
  if (n == "pbt") {
    DET_RETURN_IF_ERROR(Require(Field(s, "population_size") != nullptr, "population_size", n));
    DET_RETURN_IF_ERROR(Require(Field(s, "num_rounds") != nullptr, "num_rounds", n));
    DET_RETURN_IF_ERROR(Require(lpr.has_value(), "length_per_round", n));
    DET_RETURN_IF_ERROR(Require(truncate.has_value(), "replace_function.truncate_fraction", n));
    DET_RETURN_IF_ERROR(Require(resample.has_value(), "explore_function.resample_probability", n));
    DET_RETURN_IF_ERROR(Require(perturb.has_value(), "explore_function.perturb_factor", n));
    if (population < 1) return InvalidArgument("searcher.population_size: must be >= 1");
    if (rounds < 1) return InvalidArgument("searcher.num_rounds: must be >= 1");
    if (*lpr < 1) return InvalidArgument("searcher.length_per_round: must be >= 1");
    if (!(*truncate >= 0 && *truncate <= 0.5)) {
      return InvalidArgument("searcher.replace_function.truncate_fraction: must be in [0, 0.5]");
    }
    if (!(*resample >= 0 && *resample <= 1)) {
      return InvalidArgument("searcher.explore_function.resample_probability: must be in [0, 1]");
    }
    if (!(*perturb >= 0 && *perturb <= 1)) {
      return InvalidArgument("searcher.explore_function.perturb_factor: must be in [0, 1]");
    }
    p.population_size = population;
    p.num_rounds = rounds;
    p.length_per_round = *lpr;
    p.truncate_fraction = *truncate;
    p.resample_probability = *resample;
    p.perturb_factor = *perturb;
  }
  return p;
}

}  // namespace det::master::searcher
