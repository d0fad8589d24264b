#pragma once
// Workspace names and ids as det's commands look them up (GET /api/v1/workspaces).
#include <cstdint>
#include <map>
#include <string>

#include "cli/session.h"
#include "common/status.h"

namespace det::cli {

// Workspace ids to names.
Result<std::map<int64_t, std::string>> WorkspaceNames(Session& session);
// The id of the workspace named `name`; NotFound "workspace 'NAME' not found".
Result<int64_t> WorkspaceIdByName(Session& session, const std::string& name);

}  // namespace det::cli
