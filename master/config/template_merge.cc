#include "master/config/template_merge.h"

#include <set>
#include <string>
#include <string_view>

namespace det::master::config {
namespace {

using nlohmann::json;

bool Absent(const json& j) { return j.is_null(); }

// Plain recursive merge: objects key by key, anything else `obj` wins unless null.
json MergePlain(const json& obj, const json& src) {
  if (Absent(obj)) return src;
  if (Absent(src)) return obj;
  if (!obj.is_object() || !src.is_object()) return obj;
  json out = obj;
  for (auto it = src.begin(); it != src.end(); ++it) {
    if (!out.contains(it.key()) || out[it.key()].is_null()) {
      out[it.key()] = it.value();
    } else {
      out[it.key()] = MergePlain(out[it.key()], it.value());
    }
  }
  return out;
}

// `obj`'s entries, then `src`'s entries whose key (from `key_of`) `obj` does not have.
template <typename KeyOf>
json MergeListByKey(const json& obj, const json& src, KeyOf key_of) {
  if (Absent(obj)) return src;
  if (Absent(src) || !obj.is_array() || !src.is_array()) return obj;
  json out = obj;
  std::set<std::string> seen;
  for (const json& e : obj) seen.insert(key_of(e));
  for (const json& e : src) {
    std::string k = key_of(e);
    if (seen.insert(k).second) out.push_back(e);
  }
  return out;
}

std::string FieldKey(const json& e, const char* field) {
  if (e.is_object() && e.contains(field)) return e[field].dump();
  return e.dump();
}

std::string LogPolicyKey(const json& e) {
  if (e.is_object() && e.contains("name") && !e["name"].is_null()) {
    return "name:" + e["name"].dump();
  }
  if (!e.is_object()) return e.dump();
  return "unnamed:" + e.value("action", json()).dump() + ":" + e.value("pattern", json()).dump();
}

// A per-device value (environment_variables, image) as {cpu, cuda, rocm}; a plain value sets
// all three, `gpu` is the old name of `cuda`.
json PerDevice(const json& v) {
  if (!v.is_object()) return json{{"cpu", v}, {"cuda", v}, {"rocm", v}};
  json out = json::object();
  for (const char* k : {"cpu", "cuda", "rocm"}) {
    if (v.contains(k) && !v[k].is_null()) out[k] = v[k];
  }
  if (!out.contains("cuda") && v.contains("gpu") && !v["gpu"].is_null()) out["cuda"] = v["gpu"];
  return out;
}

json MergeEnvironmentVariables(const json& obj, const json& src) {
  if (Absent(obj)) return src;
  if (Absent(src)) return obj;
  if (obj.is_array() && src.is_array()) {
    json out = src;
    for (const json& e : obj) out.push_back(e);
    return out;
  }
  json a = PerDevice(obj), b = PerDevice(src);
  json out = json::object();
  for (const char* k : {"cpu", "cuda", "rocm"}) {
    json list = json::array();
    for (const json* side : {&b, &a}) {
      if (side->contains(k) && (*side)[k].is_array()) {
        for (const json& e : (*side)[k]) list.push_back(e);
      }
    }
    out[k] = list;
  }
  return out;
}

json MergeImage(const json& obj, const json& src) {
  if (Absent(obj)) return src;
  if (Absent(src) || !obj.is_object()) return obj;
  return MergePlain(obj, PerDevice(src));
}

// A union by `tag` (checkpoint storage `type`, searcher `name`): a different kind on each side
// keeps only the config's kind, with the shared keys filled from the template.
json MergeUnion(const json& obj, const json& src, const char* tag,
                std::initializer_list<std::string_view> shared) {
  if (Absent(obj)) return src;
  if (Absent(src) || !obj.is_object() || !src.is_object()) return obj;
  bool both_tagged =
      obj.contains(tag) && src.contains(tag) && !obj[tag].is_null() && !src[tag].is_null();
  if (!both_tagged || obj[tag] == src[tag]) {
    json out = MergePlain(obj, src);
    // Azure: the credentials come from one side only (connection string or account url).
    if (out.value(tag, json()) == "azure" && both_tagged) {
      const json& cred =
          (obj.contains("connection_string") || obj.contains("account_url")) ? obj : src;
      for (const char* k : {"connection_string", "account_url", "credential"}) {
        out.erase(k);
        if (cred.contains(k)) out[k] = cred[k];
      }
    }
    return out;
  }
  json out = obj;
  for (std::string_view k : shared) {
    std::string key(k);
    if ((!out.contains(key) || out[key].is_null()) && src.contains(key)) out[key] = src[key];
  }
  return out;
}

bool IsNestedHp(const json& hp) { return hp.is_object() && !hp.contains("type"); }

json MergeHyperparameter(const json& obj, const json& src) {
  if (Absent(obj)) return src;
  if (!IsNestedHp(obj) || !IsNestedHp(src)) return obj;
  json out = obj;
  for (auto it = src.begin(); it != src.end(); ++it) {
    out[it.key()] =
        out.contains(it.key()) ? MergeHyperparameter(out[it.key()], it.value()) : it.value();
  }
  return out;
}

json MergeHyperparameters(const json& obj, const json& src) {
  if (Absent(obj)) return src;
  if (Absent(src) || !obj.is_object() || !src.is_object()) return obj;
  json out = obj;
  for (auto it = src.begin(); it != src.end(); ++it) {
    out[it.key()] =
        out.contains(it.key()) ? MergeHyperparameter(out[it.key()], it.value()) : it.value();
  }
  return out;
}

json MergeLabels(const json& obj, const json& src) {
  return MergeListByKey(obj, src, [](const json& e) { return e.dump(); });
}

// Merges two objects key by key, with `merge_key(key, obj_value, src_value)` for keys on both.
template <typename MergeKey>
json MergeObject(const json& obj, const json& src, MergeKey merge_key) {
  if (Absent(obj)) return src;
  if (Absent(src) || !obj.is_object() || !src.is_object()) return obj;
  json out = obj;
  for (auto it = src.begin(); it != src.end(); ++it) {
    if (!out.contains(it.key()) || out[it.key()].is_null()) {
      out[it.key()] = it.value();
    } else {
      out[it.key()] = merge_key(it.key(), out[it.key()], it.value());
    }
  }
  return out;
}

json MergeEnvironment(const json& obj, const json& src) {
  return MergeObject(obj, src, [](const std::string& k, const json& a, const json& b) {
    if (k == "environment_variables") return MergeEnvironmentVariables(a, b);
    if (k == "proxy_ports") {
      return MergeListByKey(a, b, [](const json& e) { return FieldKey(e, "proxy_port"); });
    }
    if (k == "image") return MergeImage(a, b);
    return MergePlain(a, b);
  });
}

json MergeResources(const json& obj, const json& src) {
  return MergeObject(obj, src, [](const std::string& k, const json& a, const json& b) {
    if (k == "devices") {
      return MergeListByKey(a, b, [](const json& e) { return FieldKey(e, "container_path"); });
    }
    return MergePlain(a, b);
  });
}

}  // namespace

json MergeTemplate(const json& config, const json& template_config) {
  return MergeObject(
      config, template_config, [](const std::string& k, const json& a, const json& b) -> json {
        if (k == "bind_mounts") {
          return MergeListByKey(a, b, [](const json& e) { return FieldKey(e, "container_path"); });
        }
        if (k == "log_policies") return MergeListByKey(a, b, LogPolicyKey);
        if (k == "labels") return MergeLabels(a, b);
        if (k == "environment") return MergeEnvironment(a, b);
        if (k == "resources") return MergeResources(a, b);
        if (k == "hyperparameters") return MergeHyperparameters(a, b);
        if (k == "checkpoint_storage" || k == "tensorboard_storage") {
          return MergeUnion(a, b, "type",
                            {"save_experiment_best", "save_trial_best", "save_trial_latest"});
        }
        if (k == "searcher") {
          return MergeUnion(
              a, b, "name",
              {"metric", "smaller_is_better", "source_trial_id", "source_checkpoint_uuid"});
        }
        return MergePlain(a, b);
      });
}

}  // namespace det::master::config
