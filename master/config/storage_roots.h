#pragma once
// The directories of a file checkpoint storage that the master itself reads and deletes
// (downloads, GC): a shared_fs storage's host_path (with storage_path) and a directory
// storage's container_path. A user may name them only under the roots the admin allows
// (master config checkpoint_storage_allowed_roots, by default the master's own storage path).
// This check is lexical (the config library does no I/O); every access resolves links again
// (server/checkpoint_paths.h).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/config/problems.h"

namespace det::master::config {

// Where `storage`'s checkpoints lie on the master's host: host_path/storage_path (an absolute
// storage_path as is) for shared_fs, container_path for directory; "" for every other type or a
// storage missing the field.
std::string StorageBaseDir(const nlohmann::json& storage);

// Adds a problem naming checkpoint_storage.host_path / container_path, the value and the
// allowed roots when a path the master would read is not inside one of `allowed_roots`
// (component-wise, after "." and ".." are folded). No roots: no file storage path is allowed.
void CheckStorageRoots(const nlohmann::json& storage, const std::vector<std::string>& allowed_roots,
                       internal::Problems* problems);

// The same for a whole (defaulted) experiment config, as a status: InvalidArgument listing the
// problems. Unset `allowed_roots` (a master config never finalized, in tests): no limit.
Status CheckConfigStorageRoots(const nlohmann::json& config,
                               const std::optional<std::vector<std::string>>& allowed_roots);

}  // namespace det::master::config
