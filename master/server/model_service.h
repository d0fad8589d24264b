#pragma once
// ModelService: the model registry. Models have unique (case-sensitive) names, belong to a
// workspace and a user, and hold versions numbered 1, 2, ... (one more than the model's highest,
// as Determined numbers them), each pointing at a COMPLETED checkpoint. The service owns every
// rule of the registry; routes only parse and render. A checkpoint registered as a version may
// not be deleted: RefuseRegisteredCheckpoints is how the checkpoint code asks.
// Thread-safe: one mutex makes each read-check-write (PATCH, register) atomic.

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

struct WorkspaceRef {
  int64_t id = 0;
  std::string name;
};

// How the registry finds workspaces; NotFound for an unknown one.
struct WorkspaceLookup {
  std::function<Result<WorkspaceRef>(int64_t id)> by_id;
  std::function<Result<WorkspaceRef>(const std::string& name)> by_name;
};

// The one workspace a fresh cluster has: 1 "Uncategorized".
WorkspaceLookup BuiltinWorkspaces();

// Who asks (for ownership and the user recorded on what is created).
struct ModelCaller {
  int64_t user_id = 0;
  bool admin = false;
};

struct ModelView {
  store::ModelRow row;
  std::string username;
};

struct ModelVersionView {
  store::ModelVersionRow row;
  ModelView model;
  store::CheckpointRow checkpoint;
  std::string username;
};

struct CreateModelRequest {
  std::string name;
  std::string description;
  std::string notes;
  nlohmann::json metadata = nlohmann::json::object();
  nlohmann::json labels = nlohmann::json::array();  // validated: a list of strings
  std::optional<int64_t> workspace_id;              // wins over workspace_name
  std::optional<std::string> workspace_name;
};

// GET /api/v1/models: filters (empty = any) and order.
struct ModelQuery {
  std::string sort_by;   // SORT_BY_* name or number; "" = by id
  std::string order_by;  // ORDER_BY_* name or number; "" = ascending
  std::optional<int64_t> id;
  std::string name;                 // case-insensitive substring
  std::string description;          // case-insensitive substring
  std::vector<std::string> labels;  // any of them
  std::optional<bool> archived;
  std::vector<std::string> users;  // usernames
  std::vector<int64_t> user_ids;
  std::vector<int64_t> workspace_ids;  // wins over workspace_names
  std::vector<std::string> workspace_names;
};

struct RegisterVersionRequest {
  std::string checkpoint_uuid;
  std::string name;
  std::string comment;
  std::string notes;
  nlohmann::json metadata = nlohmann::json::object();
  nlohmann::json labels = nlohmann::json::array();
};

class ModelService {
 public:
  ModelService(store::Store* store, const Clock* clock,
               WorkspaceLookup workspaces = BuiltinWorkspaces());

  // `identifier` is a model's id when it is all digits, else its name (model names may not be
  // all digits for that reason).
  Result<ModelView> Get(const std::string& identifier);
  Result<ModelView> Create(const CreateModelRequest& req, const ModelCaller& who);
  Result<std::vector<ModelView>> List(const ModelQuery& query);
  // Determined's PatchModel fields: name, description, notes, metadata (replaces), labels
  // (replace; duplicates dropped), workspaceId | workspaceName. Refused on an archived model.
  Result<ModelView> Patch(const std::string& identifier, const nlohmann::json& patch);
  Status SetArchived(const std::string& identifier, bool archived);
  Status Move(const std::string& identifier, int64_t workspace_id);
  // The owner or an admin only; takes the versions along (their checkpoints stay).
  Status Delete(const std::string& identifier, const ModelCaller& who);
  // Every label of the models (in one workspace when given), the most used first, then by name.
  Result<std::vector<std::string>> Labels(std::optional<int64_t> workspace_id);

  Result<ModelVersionView> RegisterVersion(const std::string& identifier,
                                           const RegisterVersionRequest& req,
                                           const ModelCaller& who);
  Result<ModelVersionView> GetVersion(const std::string& identifier, int64_t version);
  // sort_by: SORT_BY_VERSION (default) | SORT_BY_CREATION_TIME; order_by: ORDER_BY_ASC (default)
  // | ORDER_BY_DESC (names or numbers).
  Result<std::vector<ModelVersionView>> ListVersions(const ModelView& model,
                                                     const std::string& sort_by,
                                                     const std::string& order_by);
  // Determined's PatchModelVersion fields: name, comment, notes, metadata (replaces), labels.
  Result<ModelVersionView> PatchVersion(const std::string& identifier, int64_t version,
                                        const nlohmann::json& patch);
  // The version's creator, the model's owner or an admin only.
  Status DeleteVersion(const std::string& identifier, int64_t version, const ModelCaller& who);
  // The metrics of the trials that reported using this version
  // (core_context.experimental.report_task_using_model_version), of `source_type` ("" = any) and
  // `group` ("" = all), by trial then step, at most 1000 per trial.
  Result<std::vector<store::MetricRow>> VersionTrialMetrics(const std::string& identifier,
                                                            int64_t version,
                                                            const std::string& source_type,
                                                            const std::string& group);

 private:
  Result<ModelView> ViewLocked(store::ModelRow row);
  Result<ModelVersionView> VersionViewLocked(const ModelView& model, store::ModelVersionRow row);
  Result<ModelView> GetLocked(const std::string& identifier);
  Result<store::ModelVersionRow> FindVersionLocked(const ModelView& model, int64_t version);
  std::string UsernameLocked(int64_t user_id);

  store::Store* store_;
  const Clock* clock_;
  WorkspaceLookup workspaces_;
  std::mutex mu_;
};

// Validates a model name as Determined does: not blank, no double spaces, no slashes, not all
// digits (a name like that would read as an id).
Status ValidateModelName(const std::string& name);
// A `field` holding a list of strings, duplicates dropped (first kept), order kept.
Result<std::vector<std::string>> ParseLabels(const nlohmann::json& labels,
                                             const std::string& field);

// The checkpoints of `uuids` that are registered as a model version.
Result<std::set<std::string>> RegisteredCheckpoints(store::Store* store,
                                                    const std::vector<std::string>& uuids);
// InvalidArgument naming every checkpoint of `uuids` registered as a model version (its model
// and version) when there is one, so it cannot be `action` ("deleted", "patched").
Status RefuseRegisteredCheckpoints(store::Store* store, const std::vector<std::string>& uuids,
                                   std::string_view action);

}  // namespace det::master::server
