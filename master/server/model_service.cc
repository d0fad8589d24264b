#include "master/server/model_service.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace det::master::server {

using nlohmann::json;

namespace {

constexpr int64_t kDefaultWorkspaceId = 1;
constexpr const char* kDefaultWorkspaceName = "Uncategorized";

bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ContainsNoCase(const std::string& haystack, const std::string& needle) {
  return Lower(haystack).find(Lower(needle)) != std::string::npos;
}

// An enum value given by name or number (grpc-gateway accepts both); "" when unspecified.
Result<std::string> EnumName(const std::string& value, const char* field,
                             const std::vector<std::pair<int, std::string>>& known) {
  if (value.empty()) return std::string();
  for (const auto& [num, name] : known) {
    if (value == name || value == std::to_string(num)) return num == 0 ? std::string() : name;
  }
  std::string want;
  for (const auto& [num, name] : known) want += (want.empty() ? "" : ", ") + name;
  return InvalidArgument(std::string(field) + ": unknown value \"" + value + "\" (want one of " +
                         want + ")");
}

Result<bool> Descending(const std::string& order_by) {
  DET_ASSIGN_OR_RETURN(
      std::string order,
      EnumName(order_by, "orderBy",
               {{0, "ORDER_BY_UNSPECIFIED"}, {1, "ORDER_BY_ASC"}, {2, "ORDER_BY_DESC"}}));
  return order == "ORDER_BY_DESC";
}

Status CheckString(const json& patch, const char* field) {
  if (patch.contains(field) && !patch[field].is_null() && !patch[field].is_string()) {
    return InvalidArgument(std::string(field) + ": must be a string (got " + patch[field].dump() +
                           ")");
  }
  return Status::Ok();
}

// Applies a string field of a PATCH body when present.
void TakeString(const json& patch, const char* field, std::string& target) {
  if (patch.contains(field) && patch[field].is_string()) target = patch[field].get<std::string>();
}

Result<json> CheckMetadata(const json& metadata, const std::string& field) {
  if (metadata.is_null()) return json::object();
  if (!metadata.is_object()) {
    return InvalidArgument(field + ": must be an object (got " + metadata.dump() + ")");
  }
  return metadata;
}

}  // namespace

WorkspaceLookup BuiltinWorkspaces() {
  WorkspaceLookup w;
  w.by_id = [](int64_t id) -> Result<WorkspaceRef> {
    if (id != kDefaultWorkspaceId)
      return NotFound("workspace " + std::to_string(id) + " not found");
    return WorkspaceRef{kDefaultWorkspaceId, kDefaultWorkspaceName};
  };
  w.by_name = [](const std::string& name) -> Result<WorkspaceRef> {
    if (name != kDefaultWorkspaceName) return NotFound("workspace \"" + name + "\" not found");
    return WorkspaceRef{kDefaultWorkspaceId, kDefaultWorkspaceName};
  };
  return w;
}

Status ValidateModelName(const std::string& name) {
  if (name.find_first_not_of(' ') == std::string::npos) {
    return InvalidArgument("name: a model name must not be blank");
  }
  if (name.find("  ") != std::string::npos) {
    return InvalidArgument("name: a model name must not hold two spaces in a row (\"" + name +
                           "\")");
  }
  if (name.find_first_of("/\\") != std::string::npos) {
    return InvalidArgument("name: a model name must not hold slashes (\"" + name + "\")");
  }
  if (AllDigits(name)) {
    return InvalidArgument("name: a model name must not be only digits (\"" + name +
                           "\"; digits name a model by id)");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ParseLabels(const json& labels, const std::string& field) {
  std::vector<std::string> out;
  if (labels.is_null()) return out;
  if (!labels.is_array()) {
    return InvalidArgument(field + ": must be a list of strings (got " + labels.dump() + ")");
  }
  std::set<std::string> seen;
  for (const auto& l : labels) {
    if (!l.is_string()) {
      return InvalidArgument(field + ": must be a list of strings (got element " + l.dump() + ")");
    }
    if (seen.insert(l.get<std::string>()).second) out.push_back(l.get<std::string>());
  }
  return out;
}

Result<std::set<std::string>> RegisteredCheckpoints(store::Store* store,
                                                    const std::vector<std::string>& uuids) {
  DET_ASSIGN_OR_RETURN(std::vector<store::ModelVersionRow> versions,
                       store->ListModelVersionsForCheckpoints(uuids));
  std::set<std::string> out;
  for (const auto& v : versions) out.insert(v.checkpoint_uuid);
  return out;
}

Status RefuseRegisteredCheckpoints(store::Store* store, const std::vector<std::string>& uuids,
                                   std::string_view action) {
  DET_ASSIGN_OR_RETURN(std::vector<store::ModelVersionRow> versions,
                       store->ListModelVersionsForCheckpoints(uuids));
  if (versions.empty()) return Status::Ok();
  std::string list;
  for (const auto& v : versions) {
    Result<store::ModelRow> m = store->GetModelById(v.model_id);
    std::string model = m.ok() ? "\"" + m->name + "\" (model " + std::to_string(v.model_id) + ")"
                               : "model " + std::to_string(v.model_id);
    list += (list.empty() ? "" : "; ") + v.checkpoint_uuid + " is version " +
            std::to_string(v.version) + " of " + model;
  }
  return InvalidArgument("checkpoints registered in the model registry cannot be " +
                         std::string(action) + ": " + list +
                         " (delete those model versions first)");
}

ModelService::ModelService(store::Store* store, const Clock* clock, WorkspaceLookup workspaces)
    : store_(store), clock_(clock), workspaces_(std::move(workspaces)) {}

std::string ModelService::UsernameLocked(int64_t user_id) {
  Result<store::UserRow> u = store_->GetUserById(user_id);
  return u.ok() ? u->username : "";
}

Result<ModelView> ModelService::ViewLocked(store::ModelRow row) {
  ModelView v;
  v.username = UsernameLocked(row.user_id);
  v.row = std::move(row);
  return v;
}

Result<ModelView> ModelService::GetLocked(const std::string& identifier) {
  // More than 18 digits cannot be an id (and would overflow).
  Result<store::ModelRow> row = !AllDigits(identifier) ? store_->GetModelByName(identifier)
                                : identifier.size() > 18
                                    ? Result<store::ModelRow>(NotFound(identifier))
                                    : store_->GetModelById(std::stoll(identifier));
  if (!row.ok()) {
    if (row.status().code() == StatusCode::kNotFound) {
      return NotFound("model \"" + identifier + "\" not found");
    }
    return row.status();
  }
  return ViewLocked(std::move(row).value());
}

Result<ModelVersionView> ModelService::VersionViewLocked(const ModelView& model,
                                                         store::ModelVersionRow row) {
  ModelVersionView v;
  v.model = model;
  v.username = UsernameLocked(row.user_id);
  Result<store::CheckpointRow> c = store_->GetCheckpoint(row.checkpoint_uuid);
  if (c.ok()) {
    v.checkpoint = std::move(c).value();
  } else {
    v.checkpoint.uuid = row.checkpoint_uuid;  // gone from the store: render what is known
    v.checkpoint.state = "DELETED";
  }
  v.row = std::move(row);
  return v;
}

Result<ModelView> ModelService::Get(const std::string& identifier) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetLocked(identifier);
}

Result<ModelView> ModelService::Create(const CreateModelRequest& req, const ModelCaller& who) {
  DET_RETURN_IF_ERROR(ValidateModelName(req.name));
  DET_ASSIGN_OR_RETURN(json metadata, CheckMetadata(req.metadata, "metadata"));
  DET_ASSIGN_OR_RETURN(std::vector<std::string> labels, ParseLabels(req.labels, "labels"));
  WorkspaceRef ws{kDefaultWorkspaceId, kDefaultWorkspaceName};
  if (req.workspace_id) {
    DET_ASSIGN_OR_RETURN(ws, workspaces_.by_id(*req.workspace_id));
  } else if (req.workspace_name) {
    DET_ASSIGN_OR_RETURN(ws, workspaces_.by_name(*req.workspace_name));
  }
  store::ModelRow row;
  row.name = req.name;
  row.description = req.description;
  row.notes = req.notes;
  row.metadata = std::move(metadata);
  row.labels = std::move(labels);
  row.user_id = who.user_id;
  row.workspace_id = ws.id;
  row.creation_time = row.last_updated_time = clock_->NowMicros();
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(store::ModelRow created, store_->InsertModel(row));
  return ViewLocked(std::move(created));
}

Result<std::vector<ModelView>> ModelService::List(const ModelQuery& q) {
  DET_ASSIGN_OR_RETURN(std::string sort, EnumName(q.sort_by, "sortBy",
                                                  {{0, "SORT_BY_UNSPECIFIED"},
                                                   {1, "SORT_BY_NAME"},
                                                   {2, "SORT_BY_DESCRIPTION"},
                                                   {4, "SORT_BY_CREATION_TIME"},
                                                   {5, "SORT_BY_LAST_UPDATED_TIME"},
                                                   {6, "SORT_BY_NUM_VERSIONS"},
                                                   {7, "SORT_BY_WORKSPACE"}}));
  DET_ASSIGN_OR_RETURN(bool desc, Descending(q.order_by));
  // Workspace names become ids; an unknown name matches nothing (as Determined's IN query).
  std::set<int64_t> workspace_ids(q.workspace_ids.begin(), q.workspace_ids.end());
  bool workspace_filter = !q.workspace_ids.empty();
  if (!workspace_filter && !q.workspace_names.empty()) {
    workspace_filter = true;
    for (const auto& name : q.workspace_names) {
      Result<WorkspaceRef> ws = workspaces_.by_name(name);
      if (ws.ok()) workspace_ids.insert(ws->id);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(std::vector<store::ModelRow> rows, store_->ListModels());
  std::vector<ModelView> out;
  for (auto& r : rows) {
    if (q.id && *q.id != 0 && r.id != *q.id) continue;
    if (q.archived && r.archived != *q.archived) continue;
    if (!q.name.empty() && !ContainsNoCase(r.name, q.name)) continue;
    if (!q.description.empty() && !ContainsNoCase(r.description, q.description)) continue;
    if (!q.user_ids.empty() &&
        std::find(q.user_ids.begin(), q.user_ids.end(), r.user_id) == q.user_ids.end()) {
      continue;
    }
    if (workspace_filter && !workspace_ids.count(r.workspace_id)) continue;
    if (!q.labels.empty() &&
        std::none_of(r.labels.begin(), r.labels.end(), [&](const std::string& l) {
          return std::find(q.labels.begin(), q.labels.end(), l) != q.labels.end();
        })) {
      continue;
    }
    DET_ASSIGN_OR_RETURN(ModelView v, ViewLocked(std::move(r)));
    if (!q.users.empty() &&
        std::find(q.users.begin(), q.users.end(), v.username) == q.users.end()) {
      continue;
    }
    out.push_back(std::move(v));
  }
  std::map<int64_t, std::string> workspace_names;
  if (sort == "SORT_BY_WORKSPACE") {
    for (const auto& v : out) {
      Result<WorkspaceRef> ws = workspaces_.by_id(v.row.workspace_id);
      workspace_names[v.row.workspace_id] = ws.ok() ? ws->name : "";
    }
  }
  // The sort key, then the id, both in the requested direction (Determined's ORDER BY).
  auto less = [&](const ModelView& a, const ModelView& b) {
    const store::ModelRow& x = a.row;
    const store::ModelRow& y = b.row;
    auto key = [&](auto fx, auto fy) {
      if (fx != fy) return fx < fy;
      return x.id < y.id;
    };
    if (sort == "SORT_BY_NAME") return key(x.name, y.name);
    if (sort == "SORT_BY_DESCRIPTION") return key(x.description, y.description);
    if (sort == "SORT_BY_CREATION_TIME") return key(x.creation_time, y.creation_time);
    if (sort == "SORT_BY_LAST_UPDATED_TIME") return key(x.last_updated_time, y.last_updated_time);
    if (sort == "SORT_BY_NUM_VERSIONS") return key(x.num_versions, y.num_versions);
    if (sort == "SORT_BY_WORKSPACE") {
      return key(workspace_names[x.workspace_id], workspace_names[y.workspace_id]);
    }
    return x.id < y.id;
  };
  std::stable_sort(out.begin(), out.end(), [&](const ModelView& a, const ModelView& b) {
    return desc ? less(b, a) : less(a, b);
  });
  return out;
}

Result<ModelView> ModelService::Patch(const std::string& identifier, const json& patch) {
  if (!patch.is_object()) return InvalidArgument("model: must be an object");
  for (const char* f : {"name", "description", "notes", "workspaceName"}) {
    DET_RETURN_IF_ERROR(CheckString(patch, f));
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView current, GetLocked(identifier));
  store::ModelRow row = current.row;
  if (row.archived) {
    return FailedPrecondition("model \"" + row.name +
                              "\" is archived: unarchive it before changing it");
  }
  bool changed = false;
  auto update = [&](auto& target, const auto& value) {
    if (target != value) {
      target = value;
      changed = true;
    }
  };
  if (patch.contains("name") && patch["name"].is_string()) {
    std::string name = patch["name"];
    DET_RETURN_IF_ERROR(ValidateModelName(name));
    update(row.name, name);
  }
  std::string description = row.description, notes = row.notes;
  TakeString(patch, "description", description);
  TakeString(patch, "notes", notes);
  update(row.description, description);
  update(row.notes, notes);
  if (patch.contains("metadata") && !patch["metadata"].is_null()) {
    DET_ASSIGN_OR_RETURN(json metadata, CheckMetadata(patch["metadata"], "model.metadata"));
    update(row.metadata, metadata);
  }
  if (patch.contains("labels") && !patch["labels"].is_null()) {
    DET_ASSIGN_OR_RETURN(std::vector<std::string> labels,
                         ParseLabels(patch["labels"], "model.labels"));
    update(row.labels, labels);
  }
  const json* ws_id = patch.contains("workspaceId") ? &patch["workspaceId"] : nullptr;
  if (ws_id != nullptr && !ws_id->is_null()) {
    if (!ws_id->is_number_integer()) {
      return InvalidArgument("model.workspaceId: must be an integer (got " + ws_id->dump() + ")");
    }
    DET_ASSIGN_OR_RETURN(WorkspaceRef ws, workspaces_.by_id(ws_id->get<int64_t>()));
    update(row.workspace_id, ws.id);
  } else if (patch.contains("workspaceName") && patch["workspaceName"].is_string()) {
    DET_ASSIGN_OR_RETURN(WorkspaceRef ws, workspaces_.by_name(patch["workspaceName"]));
    update(row.workspace_id, ws.id);
  }
  if (!changed) return current;
  row.last_updated_time = clock_->NowMicros();
  DET_RETURN_IF_ERROR(store_->UpdateModel(row));
  DET_ASSIGN_OR_RETURN(store::ModelRow stored, store_->GetModelById(row.id));
  return ViewLocked(std::move(stored));
}

Status ModelService::SetArchived(const std::string& identifier, bool archived) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView m, GetLocked(identifier));
  m.row.archived = archived;
  m.row.last_updated_time = clock_->NowMicros();
  return store_->UpdateModel(m.row);
}

Status ModelService::Move(const std::string& identifier, int64_t workspace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView m, GetLocked(identifier));
  DET_ASSIGN_OR_RETURN(WorkspaceRef ws, workspaces_.by_id(workspace_id));
  if (m.row.workspace_id == ws.id) return Status::Ok();
  m.row.workspace_id = ws.id;
  m.row.last_updated_time = clock_->NowMicros();
  return store_->UpdateModel(m.row);
}

Status ModelService::Delete(const std::string& identifier, const ModelCaller& who) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView m, GetLocked(identifier));
  if (!who.admin && m.row.user_id != who.user_id) {
    return PermissionDenied("only an admin or the model's owner (" + m.username +
                            ") may delete model \"" + m.row.name + "\"");
  }
  return store_->DeleteModel(m.row.id);
}

Result<std::vector<std::string>> ModelService::Labels(std::optional<int64_t> workspace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(std::vector<store::ModelRow> rows, store_->ListModels());
  std::map<std::string, int64_t> count;  // label -> models holding it
  for (const auto& r : rows) {
    if (workspace_id && *workspace_id > 0 && r.workspace_id != *workspace_id) continue;
    for (const auto& l : r.labels) ++count[l];
  }
  std::vector<std::pair<std::string, int64_t>> sorted(count.begin(), count.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (auto& [label, n] : sorted) out.push_back(label);
  return out;
}

Result<ModelVersionView> ModelService::RegisterVersion(const std::string& identifier,
                                                       const RegisterVersionRequest& req,
                                                       const ModelCaller& who) {
  if (req.checkpoint_uuid.empty()) return InvalidArgument("checkpointUuid: required");
  DET_ASSIGN_OR_RETURN(json metadata, CheckMetadata(req.metadata, "metadata"));
  DET_ASSIGN_OR_RETURN(std::vector<std::string> labels, ParseLabels(req.labels, "labels"));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView model, GetLocked(identifier));
  if (model.row.archived) {
    return FailedPrecondition("model \"" + model.row.name +
                              "\" is archived: unarchive it before registering versions");
  }
  Result<store::CheckpointRow> ckpt = store_->GetCheckpoint(req.checkpoint_uuid);
  if (!ckpt.ok()) {
    if (ckpt.status().code() == StatusCode::kNotFound) {
      return NotFound("checkpoint " + req.checkpoint_uuid + " not found");
    }
    return ckpt.status();
  }
  if (ckpt->state != "COMPLETED") {
    return FailedPrecondition("checkpoint " + ckpt->uuid + " is " + ckpt->state +
                              ": only a COMPLETED checkpoint can become a model version");
  }
  // An experiment being deleted takes its checkpoints along; do not let one be registered.
  Result<store::TrialRow> trial = store_->GetTrial(ckpt->trial_id);
  if (trial.ok()) {
    Result<store::ExperimentRow> exp = store_->GetExperiment(trial->experiment_id);
    if (exp.ok() && (exp->state == "DELETING" || exp->state == "DELETE_FAILED")) {
      return FailedPrecondition("checkpoint " + ckpt->uuid + " belongs to experiment " +
                                std::to_string(exp->id) + ", which is being deleted");
    }
  }
  store::ModelVersionRow row;
  row.model_id = model.row.id;
  row.checkpoint_uuid = ckpt->uuid;
  row.name = req.name;
  row.comment = req.comment;
  row.notes = req.notes;
  row.metadata = std::move(metadata);
  row.labels = std::move(labels);
  row.user_id = who.user_id;
  row.creation_time = row.last_updated_time = clock_->NowMicros();
  DET_ASSIGN_OR_RETURN(store::ModelVersionRow stored, store_->InsertModelVersion(row));
  ++model.row.num_versions;
  return VersionViewLocked(model, std::move(stored));
}

// The model's version `version`, or NotFound naming both.
Result<store::ModelVersionRow> ModelService::FindVersionLocked(const ModelView& model,
                                                               int64_t version) {
  Result<store::ModelVersionRow> row = store_->GetModelVersion(model.row.id, version);
  if (!row.ok() && row.status().code() == StatusCode::kNotFound) {
    return NotFound("version " + std::to_string(version) + " of model \"" + model.row.name +
                    "\" not found");
  }
  return row;
}

Result<ModelVersionView> ModelService::GetVersion(const std::string& identifier, int64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView model, GetLocked(identifier));
  Result<store::ModelVersionRow> row = FindVersionLocked(model, version);
  if (!row.ok()) return row.status();
  return VersionViewLocked(model, std::move(row).value());
}

Result<std::vector<ModelVersionView>> ModelService::ListVersions(const ModelView& model,
                                                                 const std::string& sort_by,
                                                                 const std::string& order_by) {
  DET_ASSIGN_OR_RETURN(
      std::string sort,
      EnumName(sort_by, "sortBy",
               {{0, "SORT_BY_UNSPECIFIED"}, {3, "SORT_BY_VERSION"}, {4, "SORT_BY_CREATION_TIME"}}));
  DET_ASSIGN_OR_RETURN(bool desc, Descending(order_by));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(std::vector<store::ModelVersionRow> rows,
                       store_->ListModelVersions(model.row.id));
  std::vector<ModelVersionView> out;
  for (auto& r : rows) {
    DET_ASSIGN_OR_RETURN(ModelVersionView v, VersionViewLocked(model, std::move(r)));
    out.push_back(std::move(v));
  }
  auto less = [&](const ModelVersionView& a, const ModelVersionView& b) {
    if (sort == "SORT_BY_CREATION_TIME" && a.row.creation_time != b.row.creation_time) {
      return a.row.creation_time < b.row.creation_time;
    }
    return a.row.version < b.row.version;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const auto& a, const auto& b) { return desc ? less(b, a) : less(a, b); });
  return out;
}

Result<ModelVersionView> ModelService::PatchVersion(const std::string& identifier, int64_t version,
                                                    const json& patch) {
  if (!patch.is_object()) return InvalidArgument("modelVersion: must be an object");
  for (const char* f : {"name", "comment", "notes"}) DET_RETURN_IF_ERROR(CheckString(patch, f));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView model, GetLocked(identifier));
  Result<store::ModelVersionRow> found = FindVersionLocked(model, version);
  if (!found.ok()) return found.status();
  store::ModelVersionRow row = std::move(found).value();
  store::ModelVersionRow before = row;
  TakeString(patch, "name", row.name);
  TakeString(patch, "comment", row.comment);
  TakeString(patch, "notes", row.notes);
  if (patch.contains("metadata") && !patch["metadata"].is_null()) {
    DET_ASSIGN_OR_RETURN(row.metadata, CheckMetadata(patch["metadata"], "modelVersion.metadata"));
  }
  if (patch.contains("labels") && !patch["labels"].is_null()) {
    DET_ASSIGN_OR_RETURN(row.labels, ParseLabels(patch["labels"], "modelVersion.labels"));
  }
  bool changed = row.name != before.name || row.comment != before.comment ||
                 row.notes != before.notes || row.metadata != before.metadata ||
                 row.labels != before.labels;
  if (changed) {
    row.last_updated_time = clock_->NowMicros();
    DET_RETURN_IF_ERROR(store_->UpdateModelVersion(row));
  }
  return VersionViewLocked(model, std::move(row));
}

Status ModelService::DeleteVersion(const std::string& identifier, int64_t version,
                                   const ModelCaller& who) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ModelView model, GetLocked(identifier));
  Result<store::ModelVersionRow> row = FindVersionLocked(model, version);
  if (!row.ok()) return row.status();
  if (!who.admin && row->user_id != who.user_id && model.row.user_id != who.user_id) {
    return PermissionDenied(
        "only an admin, the model's owner or the version's creator may "
        "delete version " +
        std::to_string(version) + " of model \"" + model.row.name + "\"");
  }
  return store_->DeleteModelVersion(row->id);
}

Result<std::vector<store::MetricRow>> ModelService::VersionTrialMetrics(
    const std::string& identifier, int64_t version, const std::string& source_type,
    const std::string& group) {
  DET_ASSIGN_OR_RETURN(ModelVersionView v, GetVersion(identifier, version));
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialSourceInfoRow> links,
                       store_->ListTrialSourceInfos(v.row.checkpoint_uuid, source_type));
  std::vector<store::MetricRow> out;
  for (const auto& l : links) {
    if (l.model_id != v.model.row.id || l.model_version != v.row.version) continue;
    DET_ASSIGN_OR_RETURN(std::vector<store::MetricRow> rows,
                         store_->ListMetrics(l.trial_id, group));
    if (rows.size() > 1000) rows.resize(1000);  // as Determined answers
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

}  // namespace det::master::server
