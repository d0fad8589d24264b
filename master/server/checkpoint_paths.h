#pragma once
// The directories the master itself opens for a checkpoint on file storage (shared_fs,
// directory): the storage's base must resolve (links included) inside one of the roots the
// cluster allows, and <base>/<uuid> inside that base, before any read or delete.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::master::server {

// `storage`'s base directory (config::StorageBaseDir), resolved, when it lies inside one of
// `roots` (each resolved too); unset `roots`: no limit. FailedPrecondition naming the path and
// the roots otherwise; InvalidArgument for storage that is not on files.
using StorageRoots = std::optional<std::vector<std::string>>;
Result<std::filesystem::path> ResolvedStorageBase(const nlohmann::json& storage,
                                                  const StorageRoots& roots);

// <base>/<uuid>, resolved, for a valid checkpoint uuid whose directory does not leave the base
// (e.g. through a link a trial left).
Result<std::filesystem::path> CheckpointDirectory(const nlohmann::json& storage,
                                                  const StorageRoots& roots,
                                                  const std::string& uuid);

}  // namespace det::master::server
