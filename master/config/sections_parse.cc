#include "master/config/sections_parse.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace det::master::config::internal {

namespace {

using nlohmann::json;

// Starts `out` from `in` (null means {}), reporting a non-map.
bool StartSection(const json& in, std::string_view path, json* out, Problems* problems) {
  *out = in.is_null() ? json::object() : in;
  if (!out->is_object()) {
    problems->Add(path, "must be a map", in);
    return false;
  }
  return true;
}

void DefaultBool(json* out, const char* key, bool fallback, std::string_view path,
                 Problems* problems) {
  if (!ReadBool(*out, key, path, problems) && !Has(*out, key)) (*out)[key] = fallback;
}

void DefaultIntAtLeast(json* out, const char* key, int64_t min, int64_t fallback,
                       std::string_view path, Problems* problems) {
  if (auto v = ReadInt(*out, key, path, problems)) {
    if (*v < min) {
      problems->Add(JoinPath(path, key),
                    min == 1 ? std::string("must be > 0") : "must be >= " + std::to_string(min),
                    *v);
    }
  } else if (!Has(*out, key)) {
    (*out)[key] = fallback;
  }
}

}  // namespace

nlohmann::json ParseOptimizations(const nlohmann::json& in, Problems* problems) {
  constexpr std::string_view kPath = "optimizations";
  json out;
  if (!StartSection(in, kPath, &out, problems)) return out;
  RejectUnknownKeys(
      out,
      {"aggregation_frequency", "average_aggregated_gradients", "average_training_metrics",
       "gradient_compression", "grad_updates_size_file", "mixed_precision",
       "tensor_fusion_threshold", "tensor_fusion_cycle_time", "auto_tune_tensor_fusion"},
      kPath, problems);
  DefaultIntAtLeast(&out, "aggregation_frequency", 1, 1, kPath, problems);
  DefaultBool(&out, "average_aggregated_gradients", true, kPath, problems);
  DefaultBool(&out, "average_training_metrics", true, kPath, problems);
  DefaultBool(&out, "gradient_compression", false, kPath, problems);
  DefaultBool(&out, "auto_tune_tensor_fusion", false, kPath, problems);
  DefaultIntAtLeast(&out, "tensor_fusion_threshold", 0, 64, kPath, problems);
  DefaultIntAtLeast(&out, "tensor_fusion_cycle_time", 0, 1, kPath, problems);
  if (!Has(out, "grad_updates_size_file")) {
    out["grad_updates_size_file"] = nullptr;
  } else {
    ReadString(out, "grad_updates_size_file", kPath, problems);
  }
  if (auto mp = ReadString(out, "mixed_precision", kPath, problems)) {
    if (*mp != "O0" && *mp != "O1" && *mp != "O2" && *mp != "O3") {
      problems->Add(JoinPath(kPath, "mixed_precision"), "must be one of O0, O1, O2, O3", *mp);
    }
  } else if (!Has(out, "mixed_precision")) {
    out["mixed_precision"] = "O0";
  }
  return out;
}

nlohmann::json ParseProfiling(const nlohmann::json& in, Problems* problems) {
  constexpr std::string_view kPath = "profiling";
  json out;
  if (!StartSection(in, kPath, &out, problems)) return out;
  RejectUnknownKeys(out, {"enabled", "begin_on_batch", "end_after_batch", "sync_timings"}, kPath,
                    problems);
  DefaultBool(&out, "enabled", false, kPath, problems);
  DefaultBool(&out, "sync_timings", true, kPath, problems);
  DefaultIntAtLeast(&out, "begin_on_batch", 0, 0, kPath, problems);
  if (!Has(out, "end_after_batch")) {
    out["end_after_batch"] = nullptr;
  } else if (auto end = ReadInt(out, "end_after_batch", kPath, problems)) {
    auto begin = out.at("begin_on_batch");
    if (begin.is_number_integer() && *end < begin.get<int64_t>()) {
      problems->Add(JoinPath(kPath, "end_after_batch"), "must be >= begin_on_batch", *end);
    }
  }
  return out;
}

// data_layer was removed in Determined 0.19.10, which since accepts any map there and ignores
// it; so does this master. The shared_fs defaults are filled for configs that name no type.
nlohmann::json ParseDataLayer(const nlohmann::json& in, Problems* problems) {
  constexpr std::string_view kPath = "data_layer";
  json out;
  if (!StartSection(in, kPath, &out, problems)) return out;
  if (!Has(out, "type")) out["type"] = "shared_fs";
  if (out.at("type") == "shared_fs") {
    for (const char* key : {"host_storage_path", "container_storage_path"}) {
      if (!out.contains(key)) out[key] = nullptr;
    }
  }
  return out;
}

nlohmann::json ParseLogPolicies(const nlohmann::json& in, const nlohmann::json& task_default,
                                Problems* problems) {
  constexpr std::string_view kPath = "log_policies";
  json policies = in;
  if (policies.is_null()) policies = task_default;
  if (policies.is_null()) {
    return json::array(
        {{{"name", "CUDA OOM"}, {"pattern", ".*CUDA out of memory.*"}},
         {{"name", "ECC Error"}, {"pattern", ".*uncorrectable ECC error encountered.*"}}});
  }
  if (!policies.is_array()) {
    problems->Add(kPath, "must be a list", policies);
    return policies;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < policies.size(); ++i) {
    std::string path = std::string(kPath) + "[" + std::to_string(i) + "]";
    const json& p = policies[i];
    if (!p.is_object()) {
      problems->Add(path, "must be a map", p);
      continue;
    }
    RejectUnknownKeys(p, {"name", "pattern", "action"}, path, problems);
    ReadString(p, "name", path, problems);
    // Patterns are RE2 syntax (Go's regexp), which std::regex does not accept in full, so they
    // are checked only for type here.
    ReadString(p, "pattern", path, problems);
    // A current policy has a name; a legacy (unnamed) one has both a pattern and an action.
    if (!p.contains("name") && !(p.contains("pattern") && p.contains("action"))) {
      problems->Add(path, "needs a name, or (legacy form) both pattern and action", p);
    }
    if (p.contains("name") && p.at("name").is_string()) {
      const std::string& name = p.at("name").get_ref<const std::string&>();
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        problems->Add(JoinPath(path, "name"), "duplicates the name of an earlier policy",
                      p.at("name"));
      }
      names.push_back(name);
    }
    if (!Has(p, "action")) continue;
    const json& action = p.at("action");
    json type = action.is_object() ? action.value("type", json()) : action;
    if (action.is_object()) RejectUnknownKeys(action, {"type"}, JoinPath(path, "action"), problems);
    if (!type.is_string() || (type.get<std::string>() != "cancel_retries" &&
                              type.get<std::string>() != "exclude_node")) {
      problems->Add(JoinPath(path, "action"), "must be cancel_retries or exclude_node", action);
    }
  }
  return policies;
}

}  // namespace det::master::config::internal
