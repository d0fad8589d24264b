#include "master/server/checkpoint_paths.h"

#include "common/contained_path.h"
#include "master/config/storage_roots.h"
#include "master/core/uuid_check.h"

namespace det::master::server {

namespace fs = std::filesystem;
using nlohmann::json;

Result<fs::path> ResolvedStorageBase(const json& storage, const StorageRoots& roots) {
  std::string base = config::StorageBaseDir(storage);
  if (base.empty()) {
    return InvalidArgument("checkpoint_storage: not a file storage with a path (type '" +
                           storage.value("type", std::string()) + "')");
  }
  if (!roots) return ResolveInside(base, base, "checkpoint_storage");
  std::string names;
  for (const std::string& root : *roots) {
    Result<fs::path> in = ResolveInside(root, base, "checkpoint_storage");
    if (in.ok()) return in;
    names += (names.empty() ? "" : ", ") + root;
  }
  return FailedPrecondition("checkpoint_storage: " + base +
                            " is not inside the storage roots the cluster allows [" + names +
                            "] (links resolved); the master neither reads nor deletes there");
}

Result<fs::path> CheckpointDirectory(const json& storage, const StorageRoots& roots,
                                     const std::string& uuid) {
  DET_RETURN_IF_ERROR(core::CheckCheckpointUuid(uuid));
  DET_ASSIGN_OR_RETURN(fs::path base, ResolvedStorageBase(storage, roots));
  Result<fs::path> dir = ResolveInside(base, uuid, "checkpoint " + uuid);
  if (!dir.ok()) return FailedPrecondition(dir.status().message());
  return dir;
}

}  // namespace det::master::server
