#pragma once
// A workspace's checkpoint_storage (Determined's checkpointStorageConfig): experiments of the
// workspace store checkpoints there unless their config names its own, as experiment over
// workspace over master (each merged over the next when their types agree).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det::master::config {

// Checks a workspace's storage as sent (null or {}: none). It must be complete on its own, as
// an experiment's checkpoint_storage is checked, and its paths must lie under the master's
// checkpoint_storage_allowed_roots (unset: no limit). Errors name `field`. Returns what to
// store: null for none, else the object as sent.
Result<nlohmann::json> CheckWorkspaceStorage(
    const nlohmann::json& storage, const std::optional<std::vector<std::string>>& allowed_roots,
    const std::string& field = "checkpointStorageConfig");

// The checkpoint_storage default an experiment of the workspace is parsed with: the
// workspace's over the master's (the master's alone when the workspace has none).
nlohmann::json WorkspaceStorageDefault(const nlohmann::json& workspace_storage,
                                       const nlohmann::json& master_storage);

}  // namespace det::master::config
