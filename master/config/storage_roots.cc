#include "master/config/storage_roots.h"

#include <filesystem>

#include "common/contained_path.h"

namespace det::master::config {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string StringField(const json& storage, const char* key) {
  if (!storage.is_object() || !storage.contains(key) || !storage[key].is_string()) return "";
  return storage[key].get<std::string>();
}

}  // namespace

std::string StorageBaseDir(const json& storage) {
  std::string type = StringField(storage, "type");
  if (type == "shared_fs") {
    std::string host = StringField(storage, "host_path");
    if (host.empty()) return "";
    std::string sp = StringField(storage, "storage_path");
    if (sp.empty()) return host;
    return fs::path(sp).is_absolute() ? sp : (fs::path(host) / sp).string();
  }
  if (type == "directory") return StringField(storage, "container_path");
  return "";
}

void CheckStorageRoots(const json& storage, const std::vector<std::string>& allowed_roots,
                       internal::Problems* problems) {
  if (!storage.is_object()) return;
  std::string type = StringField(storage, "type");
  std::vector<std::string> keys;
  if (type == "shared_fs") keys = {"host_path", "storage_path"};
  if (type == "directory") keys = {"container_path"};
  std::string roots;
  for (const auto& r : allowed_roots) roots += (roots.empty() ? "" : ", ") + r;
  for (const std::string& key : keys) {
    std::string value = StringField(storage, key.c_str());
    if (value.empty()) continue;
    std::string dir = value;
    if (key == "storage_path") {
      // A relative storage_path lies under host_path, checked above.
      if (!fs::path(value).is_absolute()) continue;
    } else if (!fs::path(value).is_absolute()) {
      continue;  // "must be an absolute path" is reported by the storage's own check
    }
    bool inside = false;
    for (const auto& root : allowed_roots) inside = inside || LexicallyInside(root, dir);
    if (!inside) {
      problems->Add("checkpoint_storage." + key,
                    "must be inside one of the storage roots the cluster allows [" + roots +
                        "] (master config checkpoint_storage_allowed_roots)",
                    storage[key]);
    }
  }
}

Status CheckConfigStorageRoots(const json& config,
                               const std::optional<std::vector<std::string>>& allowed_roots) {
  if (!allowed_roots || !config.is_object() || !config.contains("checkpoint_storage")) {
    return Status::Ok();
  }
  internal::Problems problems;
  CheckStorageRoots(config["checkpoint_storage"], *allowed_roots, &problems);
  return problems.ToStatus();
}

}  // namespace det::master::config
