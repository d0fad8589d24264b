#include "master/api/bulk_experiments.h"

#include "master/core/states.h"

namespace det::master::api {

using nlohmann::json;

namespace {

const json* Get(const json& obj, const char* camel, const char* snake) {
  if (!obj.is_object()) return nullptr;
  for (const char* k : {camel, snake}) {
    auto it = obj.find(k);
    if (it != obj.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

Result<std::vector<int64_t>> Ids(const json* v, const std::string& field,
                                  const std::string& noun = "experiment") {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  if (!v->is_array()) return InvalidArgument(field + ": must be a list of " + noun + " ids");
  for (const json& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0) {
      return InvalidArgument(field + ": " + e.dump() + " is not a" +
                             (noun == "experiment" ? "n " : " ") + noun +
                             " id (a positive integer)");
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

Result<std::vector<std::string>> Strings(const json* v, const std::string& field) {
  std::vector<std::string> out;
  if (v == nullptr) return out;
  if (!v->is_array()) return InvalidArgument(field + ": must be a list of strings");
  for (const json& e : *v) {
    if (!e.is_string()) return InvalidArgument(field + ": " + e.dump() + " is not a string");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::string> String(const json* v, const std::string& field) {
  if (v == nullptr) return std::string();
  if (!v->is_string()) return InvalidArgument(field + ": must be a string (got " + v->dump() + ")");
  return v->get<std::string>();
}

Result<int64_t> NonNegative(const json* v, const std::string& field) {
  if (v == nullptr) return int64_t{0};
  if (!v->is_number_integer() || v->get<int64_t>() < 0) {
    return InvalidArgument(field + ": must be a project id (got " + v->dump() + ")");
  }
  return v->get<int64_t>();
}

}  // namespace

const char* BulkActionName(BulkAction action) {
  switch (action) {
    case BulkAction::kActivate: return "activate";
    case BulkAction::kPause: return "pause";
    case BulkAction::kCancel: return "cancel";
    case BulkAction::kKill: return "kill";
    case BulkAction::kArchive: return "archive";
    case BulkAction::kUnarchive: return "unarchive";
    case BulkAction::kDelete: return "delete";
    case BulkAction::kMove: return "move";
  }
  return "";
}

std::vector<std::string> DefaultBulkStates(BulkAction action) {
  using core::RunState;
  auto names = [](std::initializer_list<RunState> states) {
    std::vector<std::string> out;
    for (RunState s : states) out.emplace_back(core::RunStateName(s));
    return out;
  };
  switch (action) {
    case BulkAction::kActivate: return names({RunState::kPaused});
    case BulkAction::kPause: return names({RunState::kActive});
    case BulkAction::kCancel:
    case BulkAction::kKill:
      return names({RunState::kActive, RunState::kPaused, RunState::kStoppingCompleted,
                    RunState::kStoppingCanceled, RunState::kStoppingKilled,
                    RunState::kStoppingError});
    case BulkAction::kArchive:
    case BulkAction::kUnarchive:
    case BulkAction::kDelete:
      return names({RunState::kCompleted, RunState::kCanceled, RunState::kError});
    case BulkAction::kMove: return {};
  }
  return {};
}

Result<BulkRequest> ParseBulkRequest(const json& body, BulkAction action) {
  if (!body.is_object()) return InvalidArgument("body: must be a JSON object");
  BulkRequest r;
  DET_ASSIGN_OR_RETURN(r.ids, Ids(Get(body, "experimentIds", "experiment_ids"), "experimentIds"));
  if (action == BulkAction::kMove) {
    const json* dest = Get(body, "destinationProjectId", "destination_project_id");
    if (dest == nullptr || !dest->is_number_integer() || dest->get<int64_t>() <= 0) {
      return InvalidArgument("destinationProjectId: required, a project id (got " +
                             (dest == nullptr ? std::string("none") : dest->dump()) + ")");
    }
    r.destination_project = dest->get<int64_t>();
  }
  const json* filters = Get(body, "filters", "filters");
  if (filters == nullptr) return r;
  if (!filters->is_object()) return InvalidArgument("filters: must be an object");
  store::ExperimentFilter f;
  DET_ASSIGN_OR_RETURN(f.name, String(Get(*filters, "name", "name"), "filters.name"));
  DET_ASSIGN_OR_RETURN(f.description,
                       String(Get(*filters, "description", "description"), "filters.description"));
  DET_ASSIGN_OR_RETURN(f.labels, Strings(Get(*filters, "labels", "labels"), "filters.labels"));
  if (const json* a = Get(*filters, "archived", "archived")) {
    if (!a->is_boolean()) return InvalidArgument("filters.archived: must be true or false");
    f.archived = a->get<bool>();
  }
  DET_ASSIGN_OR_RETURN(std::vector<std::string> states,
                       Strings(Get(*filters, "states", "states"), "filters.states"));
  for (const std::string& s : states) {
    std::string stored = s.rfind("STATE_", 0) == 0 ? s.substr(6) : s;
    if (!core::ParseRunState(stored)) {
      return InvalidArgument("filters.states: '" + s + "' is not an experiment state");
    }
    f.states.push_back(stored);
  }
  if (f.states.empty()) f.states = DefaultBulkStates(action);
  DET_ASSIGN_OR_RETURN(f.user_ids, Ids(Get(*filters, "userIds", "user_ids"), "filters.userIds", "user"));
  DET_ASSIGN_OR_RETURN(f.id_not_in, Ids(Get(*filters, "excludedExperimentIds",
                                            "excluded_experiment_ids"),
                                        "filters.excludedExperimentIds"));
  DET_ASSIGN_OR_RETURN(r.filter_project,
                       NonNegative(Get(*filters, "projectId", "project_id"), "filters.projectId"));
  // An archive selects what is not archived yet, an unarchive what is.
  if (!f.archived && action == BulkAction::kArchive) f.archived = false;
  if (!f.archived && action == BulkAction::kUnarchive) f.archived = true;
  r.filter = std::move(f);
  return r;
}

}  // namespace det::master::api
