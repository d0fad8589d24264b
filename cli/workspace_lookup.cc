#include "cli/workspace_lookup.h"

namespace det::cli {

using json = nlohmann::json;

Result<std::map<int64_t, std::string>> WorkspaceNames(Session& session) {
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/workspaces"));
  std::map<int64_t, std::string> names;
  for (const json& w : resp.value("workspaces", json::array())) {
    if (w.contains("id") && w["id"].is_number_integer()) {
      names[w["id"].get<int64_t>()] = w.value("name", "");
    }
  }
  return names;
}

Result<int64_t> WorkspaceIdByName(Session& session, const std::string& name) {
  DET_ASSIGN_OR_RETURN(auto names, WorkspaceNames(session));
  for (const auto& [id, n] : names) {
    if (n == name) return id;
  }
  return NotFound("workspace '" + name + "' not found");
}

}  // namespace det::cli
