// Experiment edits, continue, trial kill, and checkpoint management and download.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/archive.h"
#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/config/searcher_metric.h"
#include "master/core/uuid_check.h"
#include "master/server/checkpoint_paths.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

Result<std::vector<std::string>> StringList(const json& body, const char* camel,
                                            const char* snake) {
  const json* v = Field(body, camel, snake);
  std::vector<std::string> out;
  if (v == nullptr) return out;
  if (!v->is_array()) return InvalidArgument(std::string(camel) + ": must be a list of strings");
  for (const auto& s : *v) {
    if (!s.is_string()) return InvalidArgument(std::string(camel) + ": must be a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// The training block of a checkpoint: its trial, experiment, config and the metrics at its step.
json TrainingOf(server::Master* master, const store::CheckpointRow& c) {
  json training = {{"trialId", c.trial_id}};
  auto t = master->experiments()->GetTrial(c.trial_id);
  if (!t.ok()) return training;
  training["experimentId"] = t->row.experiment_id;
  training["hparams"] = t->row.hparams;
  auto e = master->experiments()->GetExperiment(t->row.experiment_id);
  if (e.ok()) training["experimentConfig"] = ShownConfig(master, e->row.config);
  auto vals = master->experiments()->ListMetrics(c.trial_id, "validation");
  if (vals.ok()) {
    for (const auto& v : *vals) {
      if (v.total_batches != c.steps_completed) continue;
      json avg = v.metrics.value("validation_metrics", json::object());
      training["validationMetrics"] = {{"avgMetrics", avg}};
      if (e.ok()) {
        std::optional<double> value =
            config::SearcherMetric::FromConfigJson(e->row.config).ValueIn(avg);
        if (value) training["searcherMetric"] = *value;
      }
    }
  }
  return training;
}

// Builds a tar.gz of a checkpoint: read directly on shared_fs / directory storage, through the
// master's storage helper for every other type.
Result<std::string> ArchiveCheckpoint(server::Master* master, const json& storage,
                                      const std::string& uuid) {
  namespace fs = std::filesystem;
  DET_RETURN_IF_ERROR(core::CheckCheckpointUuid(uuid));
  std::string type = storage.value("type", "");
  if (type != "shared_fs" && type != "directory") {
    return master->checkpoints()->ArchiveCheckpointFromStorage(storage, uuid);
  }
  // Resolved inside the storage, and the storage inside the roots the cluster allows.
  DET_ASSIGN_OR_RETURN(fs::path dir,
                       server::CheckpointDirectory(
                           storage, master->config().checkpoint_storage_allowed_roots, uuid));
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("checkpoint files of " + uuid + " not found");
  std::vector<ArchiveEntry> entries;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    ArchiveEntry e;
    e.path = it->path().lexically_relative(dir).string();  // fs::relative follows links
    // The entry itself, never what a link points at: a trial may have left a symbolic link to
    // any file the master can read (a download would hand its content out).
    fs::file_status st = it->symlink_status(ec);
    if (ec) return Internal("cannot read " + it->path().string() + ": " + ec.message());
    if (!fs::is_regular_file(st) && !fs::is_directory(st)) {
      return FailedPrecondition("checkpoint " + uuid + ": entry '" + e.path + "' is " +
                                (fs::is_symlink(st) ? "a symbolic link" : "a special file") +
                                "; a checkpoint download holds regular files and directories "
                                "only");
    }
    e.is_dir = fs::is_directory(st);
    e.mode = static_cast<uint32_t>(st.permissions()) & 0777;
    if (!e.is_dir) {
      std::ifstream f(it->path(), std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      e.content = ss.str();
    }
    entries.push_back(std::move(e));
  }
  return CreateTarGz(entries);
}

struct CheckpointItem {
  store::CheckpointRow row;
  json view;
};

std::optional<double> NumberAt(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return std::nullopt;
  return obj[key].get<double>();
}

// Filters by `states` and orders checkpoints as Determined's GetTrialCheckpoints and
// GetExperimentCheckpoints do: by sortByAttr or sortByMetric, then orderBy. A metric order
// without orderBy puts the best first (the experiment's smaller_is_better for the searcher
// metric, ascending for a named metric); checkpoints without the value always come last.
Result<json> SortCheckpoints(const HttpRequest& req, std::vector<CheckpointItem> items,
                             bool smaller_is_better) {
  static const std::vector<std::string> kAttrs = {"",
                                                  "SORT_BY_UNSPECIFIED",
                                                  "SORT_BY_UUID",
                                                  "SORT_BY_TRIAL_ID",
                                                  "SORT_BY_BATCH_NUMBER",
                                                  "SORT_BY_END_TIME",
                                                  "SORT_BY_STATE",
                                                  "SORT_BY_SEARCHER_METRIC"};
  std::string attr = req.Query("sortByAttr");
  if (std::find(kAttrs.begin(), kAttrs.end(), attr) == kAttrs.end()) {
    return InvalidArgument("sortByAttr: unknown value \"" + attr +
                           "\" (want one of SORT_BY_UUID, " +
                           "SORT_BY_TRIAL_ID, SORT_BY_BATCH_NUMBER, SORT_BY_END_TIME, " +
                           "SORT_BY_STATE, SORT_BY_SEARCHER_METRIC)");
  }
  DET_ASSIGN_OR_RETURN(std::optional<bool> order, ParseOrderBy(req.Query("orderBy")));
  std::string metric = req.Query("sortByMetric");
  bool explicit_order = order.has_value();
  bool desc = order.value_or(false);

  std::vector<std::string> states = req.QueryAll("states");
  if (!states.empty()) {
    std::vector<CheckpointItem> kept;
    for (auto& it : items) {
      if (std::find(states.begin(), states.end(), it.view["state"].get<std::string>()) !=
          states.end()) {
        kept.push_back(std::move(it));
      }
    }
    items = std::move(kept);
  }

  auto metric_of = [&](const CheckpointItem& it) -> std::optional<double> {
    const json& training = it.view["training"];
    if (metric.empty()) return NumberAt(training, "searcherMetric");
    if (!training.contains("validationMetrics")) return std::nullopt;
    return NumberAt(training["validationMetrics"].value("avgMetrics", json::object()),
                    metric.c_str());
  };
  bool by_metric = !metric.empty() || attr == "SORT_BY_SEARCHER_METRIC";
  bool metric_desc = explicit_order ? desc : (metric.empty() && !smaller_is_better);
  auto less = [&](const CheckpointItem& a, const CheckpointItem& b) -> bool {
    if (by_metric) {
      std::optional<double> x = metric_of(a), y = metric_of(b);
      if (x.has_value() != y.has_value()) return x.has_value();  // missing values last
      if (!x || *x == *y) return a.row.report_time < b.row.report_time;
      return metric_desc ? *x > *y : *x < *y;
    }
    const CheckpointItem& l = desc ? b : a;
    const CheckpointItem& r = desc ? a : b;
    if (attr == "SORT_BY_UUID") return l.row.uuid < r.row.uuid;
    if (attr == "SORT_BY_BATCH_NUMBER") return l.row.steps_completed < r.row.steps_completed;
    if (attr == "SORT_BY_END_TIME") return l.row.report_time < r.row.report_time;
    if (attr == "SORT_BY_STATE") return l.row.state < r.row.state;
    if (l.row.trial_id != r.row.trial_id) return l.row.trial_id < r.row.trial_id;
    return l.row.report_time < r.row.report_time;
  };
  std::stable_sort(items.begin(), items.end(), less);
  json out = json::array();
  for (auto& it : items) out.push_back(std::move(it.view));
  return out;
}

// One page of `ckpts`, sorted and filtered as the request asks.
HttpResponse CheckpointPage(server::Master* master, const HttpRequest& req,
                            const server::ExperimentView& exp,
                            const std::vector<store::CheckpointRow>& ckpts) {
  std::vector<CheckpointItem> items;
  for (const auto& c : ckpts) items.push_back({c, CheckpointJson(c, TrainingOf(master, c))});
  auto out =
      SortCheckpoints(req, std::move(items),
                      config::SearcherMetric::FromConfigJson(exp.row.config).smaller_is_better);
  if (!out.ok()) return ErrorResponse(out.status());
  auto page = Paginate(req, *out, "checkpoints");
  return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
}

// The body's checkpoint uuids (`checkpointUuids` or `checkpoint_uuids`), once `who` may modify
// every one of them (the deletion routes).
Result<std::vector<std::string>> AuthorizedUuids(server::Master* master, const Principal& who,
                                                 const json& body) {
  DET_ASSIGN_OR_RETURN(std::vector<std::string> uuids,
                       StringList(body, "checkpointUuids", "checkpoint_uuids"));
  DET_RETURN_IF_ERROR(AuthorizeEach(master, who, uuids));
  return uuids;
}

}  // namespace

json CheckpointTrainingJson(server::Master* master, const store::CheckpointRow& c) {
  return TrainingOf(master, c);
}

void RegisterCheckpointRoutes(server::Router* router, server::Master* master) {
  router->Add("PATCH", "/api/v1/experiments/{id}",
              WithAuth(master, ExperimentOwner(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json& patch = body->contains("experiment") ? (*body)["experiment"] : *body;
                Status st = master->experiments()->PatchExperiment(*id, patch);
                if (!st.ok()) return ErrorResponse(st);
                auto v = master->experiments()->GetExperiment(*id);
                if (!v.ok()) return ErrorResponse(v.status());
                return JsonResponse({{"experiment", PlacedExperimentJson(master, *v)}});
              }));

  auto label = [master](HttpRequest& req, bool add) {
    Result<int64_t> id = PathId(req, "id");
    if (!id.ok()) return ErrorResponse(id.status());
    auto v = master->experiments()->GetExperiment(*id);
    if (!v.ok()) return ErrorResponse(v.status());
    json labels = v->row.config.value("labels", json::array());
    std::string l = req.params["label"];
    json next = json::array();
    for (const auto& x : labels) {
      if (x != l) next.push_back(x);
    }
    if (add) next.push_back(l);
    Status st = master->experiments()->PatchExperiment(*id, {{"labels", next}});
    if (!st.ok()) return ErrorResponse(st);
    return JsonResponse({{"labels", next}});
  };
  router->Add("PUT", "/api/v1/experiments/{id}/labels/{label}",
              WithAuth(master, ExperimentOwner(),
                       [label](HttpRequest& req, const Principal&) { return label(req, true); }));
  router->Add("DELETE", "/api/v1/experiments/{id}/labels/{label}",
              WithAuth(master, ExperimentOwner(),
                       [label](HttpRequest& req, const Principal&) { return label(req, false); }));

  // `det experiment continue`: Determined's route names the experiment in the body
  // ({id, overrideConfig}); the path form is kept for clients of earlier versions.
  auto continue_experiment = [master](int64_t id, const json& body) {
    std::string overrides;
    if (const json* o = Field(body, "overrideConfig", "override_config"); o && o->is_string()) {
      overrides = o->get<std::string>();
    } else if (o != nullptr && !o->is_null()) {
      return ErrorResponse(InvalidArgument("overrideConfig: must be a YAML string, got " + o->dump()));
    }
    Status st = master->experiments()->ContinueExperiment(id, overrides);
    if (!st.ok()) return ErrorResponse(st);
    // Determined's ContinueExperimentResponse requires the experiment.
    auto v = master->experiments()->GetExperiment(id);
    if (!v.ok()) return ErrorResponse(v.status());
    return JsonResponse(
        {{"experiment", PlacedExperimentJson(master, *v)}, {"warnings", json::array()}});
  };
  router->Add("POST", "/api/v1/experiments/{id}/continue",
              WithAuth(master, ExperimentOwner(),
                       [continue_experiment](HttpRequest& req, const Principal&) {
                         Result<int64_t> id = PathId(req, "id");
                         if (!id.ok()) return ErrorResponse(id.status());
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         return continue_experiment(*id, *body);
                       }));
  router->Add("POST", "/api/v1/experiments/continue",
              WithAuth(master, Checked(core::Action::kModify),
                       [master, continue_experiment](HttpRequest& req, const Principal& who) {
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         const json* id = Field(*body, "id", "id");
                         if (id == nullptr || !id->is_number_integer() || id->get<int64_t>() <= 0) {
                           return ErrorResponse(
                               InvalidArgument("id: required, the experiment's id (a positive integer)"));
                         }
                         int64_t exp_id = id->get<int64_t>();
                         if (Status st = AuthorizeOn(master, who, ExperimentOwner(),
                                                     std::to_string(exp_id));
                             !st.ok()) {
                           return ErrorResponse(st);
                         }
                         return continue_experiment(exp_id, *body);
                       }));

  router->Add("DELETE", "/api/v1/experiments/{id}",
              DeferredIdAction(master, [master](int64_t id, server::Done<Status> done) {
                master->experiments()->DeleteExperiment(id, std::move(done));
              }));
  router->Add("POST", "/api/v1/trials/{id}/kill",
              DeferredIdAction(
                  master,
                  [master](int64_t id, server::Done<Status> done) {
                    master->experiments()->KillTrial(id, std::move(done));
                  },
                  Target::kTrial));

  router->Add("GET", "/api/v1/trials/{id}/checkpoints",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto trial = master->experiments()->GetTrial(*id);
                if (!trial.ok()) return ErrorResponse(trial.status());
                auto exp = master->experiments()->GetExperiment(trial->row.experiment_id);
                if (!exp.ok()) return ErrorResponse(exp.status());
                auto ckpts = master->checkpoints()->ListTrialCheckpoints(*id);
                if (!ckpts.ok()) return ErrorResponse(ckpts.status());
                return CheckpointPage(master, req, *exp, *ckpts);
              }));

  router->Add("GET", "/api/v1/experiments/{id}/checkpoints",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto exp = master->experiments()->GetExperiment(*id);
                if (!exp.ok()) return ErrorResponse(exp.status());
                auto ckpts = master->checkpoints()->ListExperimentCheckpoints(*id);
                if (!ckpts.ok()) return ErrorResponse(ckpts.status());
                return CheckpointPage(master, req, *exp, *ckpts);
              }));

  router->Add("GET", "/api/v1/checkpoints/{uuid}",
              WithAuth(master, ReadCheckpoint(), [master](HttpRequest& req, const Principal&) {
                auto c = master->checkpoints()->GetCheckpoint(req.params["uuid"]);
                if (!c.ok()) return ErrorResponse(c.status());
                return JsonResponse({{"checkpoint", CheckpointJson(*c, TrainingOf(master, *c))}});
              }));

  router->Add("DELETE", "/api/v1/checkpoints",
              WithAuth(master, Checked(core::Action::kModify),
                       [master](HttpRequest& req, const Principal& who) {
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         auto uuids = AuthorizedUuids(master, who, *body);
                         if (!uuids.ok()) return ErrorResponse(uuids.status());
                         Status st = master->checkpoints()->DeleteCheckpoints(*uuids);
                         return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
                       }));

  router->Add("POST", "/api/v1/checkpoints/rm",
              WithAuth(master, Checked(core::Action::kModify),
                       [master](HttpRequest& req, const Principal& who) {
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         auto uuids = AuthorizedUuids(master, who, *body);
                         if (!uuids.ok()) return ErrorResponse(uuids.status());
                         auto globs = StringList(*body, "checkpointGlobs", "checkpoint_globs");
                         if (!globs.ok()) return ErrorResponse(globs.status());
                         Status st = master->checkpoints()->RemoveCheckpointFiles(*uuids, *globs);
                         return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
                       }));

  router->Add("PATCH", "/api/v1/checkpoints",
              WithAuth(master, TrialChecked(), [master](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* list = Field(*body, "checkpoints", "checkpoints");
                if (list == nullptr || !list->is_array()) {
                  return ErrorResponse(InvalidArgument("checkpoints: required list"));
                }
                // A trial updates its own checkpoints; a user those of experiments they own.
                // Every one is checked before any changes (a refused batch changes nothing).
                Access access = OwnerOf(Target::kCheckpoint);
                if (who.is_allocation) access.action = core::Action::kTrialReport;
                for (const auto& c : *list) {
                  if (!c.is_object()) {
                    return ErrorResponse(InvalidArgument("checkpoints: each must be an object"));
                  }
                  Status allowed = AuthorizeOn(master, who, access, c.value("uuid", ""));
                  if (!allowed.ok()) return ErrorResponse(allowed);
                }
                for (const auto& c : *list) {
                  json resources = json::object();
                  if (c.contains("resources") && c["resources"].is_object()) {
                    resources = c["resources"].value("resources", json::object());
                  }
                  Status st = master->checkpoints()->PatchCheckpointResources(c.value("uuid", ""),
                                                                              resources);
                  if (!st.ok()) return ErrorResponse(st);
                }
                return JsonResponse(json::object());
              }));

  router->Add("POST", "/api/v1/checkpoints/{uuid}/metadata",
              WithAuth(master, ReportCheckpoint(), [master](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json& c = body->contains("checkpoint") ? (*body)["checkpoint"] : *body;
                auto md = master->checkpoints()->SetCheckpointMetadata(req.params["uuid"],
                                                                       c.value("metadata", json()));
                if (!md.ok()) return ErrorResponse(md.status());
                return JsonResponse({{"metadata", *md}});
              }));

  router->Add("GET", "/checkpoints/{uuid}",
              WithAuth(master, ReadCheckpoint(), [master](HttpRequest& req, const Principal&) {
                auto c = master->checkpoints()->GetCheckpoint(req.params["uuid"]);
                if (!c.ok()) return ErrorResponse(c.status());
                auto t = master->experiments()->GetTrial(c->trial_id);
                if (!t.ok()) return ErrorResponse(t.status());
                auto e = master->experiments()->GetExperiment(t->row.experiment_id);
                if (!e.ok()) return ErrorResponse(e.status());
                std::string accept = req.Header("accept");
                if (!accept.empty() && accept.find("gzip") == std::string::npos &&
                    accept.find("x-tar") == std::string::npos &&
                    accept.find("*/*") == std::string::npos) {
                  HttpResponse r = ErrorResponse(InvalidArgument("unsupported Accept: " + accept));
                  r.status = 415;
                  return r;
                }
                auto tgz = ArchiveCheckpoint(
                    master, e->row.config.value("checkpoint_storage", json::object()), c->uuid);
                if (!tgz.ok()) return ErrorResponse(tgz.status());
                HttpResponse resp;
                resp.content_type = "application/gzip";
                resp.body = std::move(tgz).value();
                return resp;
              }));
}

}  // namespace det::master::api
