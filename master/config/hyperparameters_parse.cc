#include "master/config/hyperparameters_parse.h"

#include <cmath>

namespace det::master::config::internal {

namespace {

using nlohmann::json;
using Type = Hyperparameter::Type;

// Reads minval/maxval/count shared by int, double and log.
void ParseRange(const json& in, const std::string& path, bool integers, Hyperparameter* hp,
                Problems* problems) {
  std::optional<double> minval, maxval;
  for (const char* key : {"minval", "maxval"}) {
    std::optional<double> v;
    if (!Has(in, key)) {
      problems->Add(JoinPath(path, key), "required");
    } else if (integers) {
      if (auto i = ReadInt(in, key, path, problems)) v = static_cast<double>(*i);
    } else {
      v = ReadNumber(in, key, path, problems);
    }
    if (v && !std::isfinite(*v)) {
      problems->Add(JoinPath(path, key), "must be finite", in.at(key));
      v.reset();
    }
    (std::string_view(key) == "minval" ? minval : maxval) = v;
  }
  if (minval && maxval && !(*minval < *maxval)) {
    problems->Add(JoinPath(path, "minval"), "minval must be less than maxval",
                  json{{"minval", in.at("minval")}, {"maxval", in.at("maxval")}});
  }
  hp->minval = minval.value_or(0);
  hp->maxval = maxval.value_or(0);
  if (auto count = ReadInt(in, "count", path, problems)) {
    if (*count < 1) problems->Add(JoinPath(path, "count"), "must be >= 1", in.at("count"));
    hp->count = count;
  }
}

Hyperparameter ParseTyped(const json& in, const std::string& path, json* defaulted,
                          Problems* problems) {
  Hyperparameter hp;
  *defaulted = in;
  const json& type_value = in.at("type");
  std::string type = type_value.is_string() ? type_value.get<std::string>() : "";
  if (type == "const") {
    hp.type = Type::kConst;
    RejectUnknownKeys(in, {"type", "val"}, path, problems);
    if (!in.contains("val")) problems->Add(JoinPath(path, "val"), "required");
    else hp.val = in.at("val");
  } else if (type == "int" || type == "double") {
    hp.type = type == "int" ? Type::kInt : Type::kDouble;
    RejectUnknownKeys(in, {"type", "minval", "maxval", "count"}, path, problems);
    ParseRange(in, path, type == "int", &hp, problems);
  } else if (type == "log") {
    hp.type = Type::kLog;
    RejectUnknownKeys(in, {"type", "minval", "maxval", "base", "count"}, path, problems);
    ParseRange(in, path, false, &hp, problems);
    if (auto base = ReadNumber(in, "base", path, problems)) {
      if (!(*base > 0) || !std::isfinite(*base)) {
        problems->Add(JoinPath(path, "base"), "must be > 0", in.at("base"));
      }
      hp.base = *base;
    }
    if (!Has(in, "base")) (*defaulted)["base"] = 10;
  } else if (type == "categorical") {
    hp.type = Type::kCategorical;
    RejectUnknownKeys(in, {"type", "vals"}, path, problems);
    if (!Has(in, "vals")) {
      problems->Add(JoinPath(path, "vals"), "required");
    } else if (!in.at("vals").is_array() || in.at("vals").empty()) {
      problems->Add(JoinPath(path, "vals"), "must be a non-empty list", in.at("vals"));
    } else {
      for (const json& v : in.at("vals")) hp.vals.push_back(v);
    }
  } else {
    problems->Add(JoinPath(path, "type"), "must be one of const, int, double, log, categorical",
                  type_value);
  }
  return hp;
}

Hyperparameter ParseOne(const json& in, const std::string& path, json* defaulted,
                        Problems* problems) {
  if (in.is_object() && in.contains("type")) return ParseTyped(in, path, defaulted, problems);
  Hyperparameter hp;
  if (in.is_object()) {
    // A map without `type` is a nested group of hyperparameters.
    hp.type = Type::kNested;
    *defaulted = json::object();
    for (const auto& [name, child] : in.items()) {
      json child_defaulted;
      hp.nested[name] = ParseOne(child, JoinPath(path, name), &child_defaulted, problems);
      (*defaulted)[name] = std::move(child_defaulted);
    }
    return hp;
  }
  hp.type = Type::kConst;
  hp.val = in;
  *defaulted = json{{"type", "const"}, {"val", in}};
  return hp;
}

}  // namespace

Hyperparameters ParseHyperparameters(const nlohmann::json& in, std::string_view path,
                                     nlohmann::json* defaulted, Problems* problems) {
  Hyperparameters hps;
  *defaulted = json::object();
  if (in.is_null()) return hps;
  if (!in.is_object()) {
    problems->Add(path, "must be a map of hyperparameters", in);
    return hps;
  }
  for (const auto& [name, value] : in.items()) {
    json child_defaulted;
    hps[name] = ParseOne(value, JoinPath(path, name), &child_defaulted, problems);
    (*defaulted)[name] = std::move(child_defaulted);
  }
  return hps;
}

void RequireGridCounts(const Hyperparameters& hps, std::string_view path, Problems* problems) {
  for (const auto& [name, hp] : hps) {
    std::string child = JoinPath(path, name);
    if (hp.type == Type::kNested) {
      RequireGridCounts(hp.nested, child, problems);
    } else if ((hp.type == Type::kInt || hp.type == Type::kDouble || hp.type == Type::kLog) &&
               !hp.count) {
      problems->Add(JoinPath(child, "count"), "required for searcher 'grid'");
    }
  }
}

}  // namespace det::master::config::internal
