#include "master/config/checkpoint_storage_parse.h"

#include <string>
#include <string_view>
#include <vector>

namespace det::master::config::internal {

namespace {

using nlohmann::json;

constexpr std::string_view kPath = "checkpoint_storage";

struct SaveDefault {
  const char* key;
  int64_t value;
};
constexpr SaveDefault kSaveDefaults[] = {
    {"save_experiment_best", 0}, {"save_trial_best", 1}, {"save_trial_latest", 1}};

void RequireString(const json& storage, const char* key, bool absolute, Problems* problems) {
  if (!Has(storage, key)) {
    problems->Add(JoinPath(kPath, key),
                  "required for type '" + storage.at("type").get<std::string>() + "'");
    return;
  }
  // A value of the wrong type is reported by the per-field type check.
  if (!storage.at(key).is_string()) return;
  auto value = ReadString(storage, key, kPath, problems);
  if (value && absolute && (value->empty() || (*value)[0] != '/')) {
    problems->Add(JoinPath(kPath, key), "must be an absolute path", storage.at(key));
  }
}

struct TypeFields {
  std::string_view type;
  std::vector<std::string_view> fields;
};
const std::vector<TypeFields> kTypeFields = {
    {"shared_fs",
     {"host_path", "storage_path", "container_path", "checkpoint_path", "tensorboard_path",
      "propagation"}},
    {"directory", {"container_path"}},
    {"s3", {"bucket", "access_key", "secret_key", "endpoint_url", "prefix"}},
    {"gcs", {"bucket", "prefix"}},
    {"azure", {"container", "connection_string", "account_url", "credential"}},
    {"hdfs", {"hdfs_url", "hdfs_path", "user"}},
};

}  // namespace

nlohmann::json MergeCheckpointStorage(const nlohmann::json& experiment,
                                      const nlohmann::json& master_default) {
  if (experiment.is_null()) return master_default;
  if (!experiment.is_object() || !master_default.is_object()) return experiment;
  if (Has(experiment, "type") && Has(master_default, "type") &&
      experiment.at("type") != master_default.at("type")) {
    return experiment;
  }
  json merged = master_default;
  for (const auto& [key, value] : experiment.items()) merged[key] = value;
  return merged;
}

nlohmann::json DefaultCheckpointStorage(const nlohmann::json& storage, Problems* problems) {
  if (storage.is_null()) return storage;
  if (!storage.is_object()) {
    problems->Add(kPath, "must be a map", storage);
    return storage;
  }
  json out = storage;
  for (const SaveDefault& d : kSaveDefaults) {
    if (auto v = ReadInt(storage, d.key, kPath, problems)) {
      if (*v < 0) problems->Add(JoinPath(kPath, d.key), "must be >= 0", storage.at(d.key));
    } else if (!Has(storage, d.key)) {
      out[d.key] = d.value;
    }
  }
  if (!Has(storage, "type")) {
    problems->Add(JoinPath(kPath, "type"), "required");
    return out;
  }
  auto type = ReadString(storage, "type", kPath, problems);
  if (!type) return out;
  std::vector<std::string_view> known = {"type", "save_experiment_best", "save_trial_best",
                                         "save_trial_latest"};
  for (const TypeFields& t : kTypeFields) {
    if (*type == t.type) known.insert(known.end(), t.fields.begin(), t.fields.end());
  }
  RejectUnknownKeys(storage, known, kPath, problems);
  for (const auto& [key, value] : storage.items()) {
    if (key != "type" && key.rfind("save_", 0) != 0 && !value.is_null() && !value.is_string()) {
      problems->Add(JoinPath(kPath, key), "must be a string", value);
    }
  }
  if (*type == "shared_fs") {
    RequireString(storage, "host_path", /*absolute=*/true, problems);
    if (Has(storage, "storage_path")) ReadString(storage, "storage_path", kPath, problems);
    if (!Has(storage, "propagation")) out["propagation"] = "rprivate";
  } else if (*type == "directory") {
    RequireString(storage, "container_path", /*absolute=*/true, problems);
  } else if (*type == "s3" || *type == "gcs") {
    RequireString(storage, "bucket", /*absolute=*/false, problems);
  } else if (*type == "azure") {
    RequireString(storage, "container", /*absolute=*/false, problems);
    if (Has(storage, "connection_string") == Has(storage, "account_url")) {
      problems->Add(kPath, "exactly one of connection_string and account_url is required for "
                           "type 'azure'");
    }
  } else if (*type == "hdfs") {
    RequireString(storage, "hdfs_url", /*absolute=*/false, problems);
    RequireString(storage, "hdfs_path", /*absolute=*/false, problems);
  } else {
    problems->Add(JoinPath(kPath, "type"),
                  "must be one of shared_fs, directory, s3, gcs, azure, hdfs", storage.at("type"));
  }
  return out;
}

}  // namespace det::master::config::internal
