#include "master/config/workspace_storage.h"

#include "master/config/checkpoint_storage_parse.h"
#include "master/config/problems.h"
#include "master/config/storage_roots.h"

namespace det::master::config {

Result<nlohmann::json> CheckWorkspaceStorage(
    const nlohmann::json& storage, const std::optional<std::vector<std::string>>& allowed_roots,
    const std::string& field) {
  if (storage.is_null() || (storage.is_object() && storage.empty())) return nlohmann::json();
  if (!storage.is_object()) {
    return InvalidArgument(field + ": must be a checkpoint storage object (got " + storage.dump() +
                           ")");
  }
  internal::Problems problems;
  nlohmann::json defaulted = internal::DefaultCheckpointStorage(storage, &problems);
  if (!problems.empty()) {
    return InvalidArgument(field + ": " + problems.ToStatus().message());
  }
  Status roots =
      CheckConfigStorageRoots(nlohmann::json{{"checkpoint_storage", defaulted}}, allowed_roots);
  if (!roots.ok()) return InvalidArgument(field + ": " + roots.message());
  return storage;
}

nlohmann::json WorkspaceStorageDefault(const nlohmann::json& workspace_storage,
                                       const nlohmann::json& master_storage) {
  if (workspace_storage.is_null()) return master_storage;
  return internal::MergeCheckpointStorage(workspace_storage, master_storage);
}

}  // namespace det::master::config
