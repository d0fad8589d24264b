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

// Go's filepath.Clean for '/'-separated paths: "a//b/./c/../d" -> "a/b/d".
std::string CleanPath(const std::string& path) {
  bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(part);
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

// shared_fs storage_path: relative (and not climbing out with ".."), or absolute and under
// host_path.
void CheckStoragePath(const json& storage, Problems* problems) {
  if (!Has(storage, "storage_path") || !storage.at("storage_path").is_string()) return;
  std::string storage_path = CleanPath(storage.at("storage_path").get<std::string>());
  bool inside = false;
  if (storage_path[0] != '/') {
    inside = storage_path != ".." && storage_path.rfind("../", 0) != 0;
  } else if (!Has(storage, "host_path") || !storage.at("host_path").is_string()) {
    return;  // host_path's own problem is reported by its check.
  } else {
    std::string host = CleanPath(storage.at("host_path").get<std::string>());
    inside = storage_path == host || host == "/" || storage_path.rfind(host + "/", 0) == 0;
  }
  if (!inside) {
    problems->Add(JoinPath(kPath, "storage_path"),
                  "must be a relative directory or a subdirectory of host_path",
                  storage.at("storage_path"));
  }
}

// s3/gcs prefix: no ".." path component (the objects would land outside the prefix).
void CheckPrefix(const json& storage, Problems* problems) {
  if (!Has(storage, "prefix") || !storage.at("prefix").is_string()) return;
  const std::string& prefix = storage.at("prefix").get_ref<const std::string&>();
  bool climbs = prefix == ".." || prefix.rfind("../", 0) == 0 ||
                prefix.find("/../") != std::string::npos ||
                (prefix.size() >= 3 && prefix.compare(prefix.size() - 3, 3, "/..") == 0);
  if (climbs) {
    problems->Add(JoinPath(kPath, "prefix"), "must not contain a '..' path component",
                  storage.at("prefix"));
  }
}

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
    CheckStoragePath(storage, problems);
    if (!Has(storage, "propagation")) out["propagation"] = "rprivate";
  } else if (*type == "directory") {
    RequireString(storage, "container_path", /*absolute=*/true, problems);
  } else if (*type == "s3" || *type == "gcs") {
    RequireString(storage, "bucket", /*absolute=*/false, problems);
    CheckPrefix(storage, problems);
  } else if (*type == "azure") {
    RequireString(storage, "container", /*absolute=*/false, problems);
    if (Has(storage, "connection_string") == Has(storage, "account_url")) {
      problems->Add(kPath,
                    "exactly one of connection_string and account_url is required for "
                    "type 'azure'");
    }
    if (Has(storage, "connection_string") && Has(storage, "credential")) {
      problems->Add(JoinPath(kPath, "credential"),
                    "must not be set together with connection_string for type 'azure'");
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
