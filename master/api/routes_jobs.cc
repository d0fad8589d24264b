// The job queue: resource pools, job-queues-v2, and job updates.
#include "common/clock.h"
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

void RegisterJobRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/resource-pools",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                int64_t slots = 0;
                int64_t agents = 0;
                for (const auto& a : master->ListAgents()) {
                  if (!a.connected) continue;
                  ++agents;
                  slots += static_cast<int64_t>(a.slots.size());
                }
                json pool = {{"name", "default"},
                             {"description", "the default pool"},
                             {"type", "RESOURCE_POOL_TYPE_STATIC"},
                             {"numAgents", agents},
                             {"slotsAvailable", slots},
                             {"schedulerType", "SCHEDULER_TYPE_PRIORITY"},
                             {"schedulerFittingPolicy", "FITTING_POLICY_BEST"},
                             {"defaultComputePool", true},
                             {"defaultAuxPool", true},
                             {"preemptible", true}};
                auto page = Paginate(req, json::array({pool}), "resourcePools");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/job-queues-v2",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                std::string pool = req.Query("resourcePool");
                json jobs = json::array();
                for (const auto& j : master->ListJobs()) {
                  if (!pool.empty() && pool != j.resource_pool) continue;
                  std::string state = j.scheduled ? "STATE_SCHEDULED" : "STATE_QUEUED";
                  json full = {{"jobId", j.job_id},
                               {"type", "TYPE_EXPERIMENT"},
                               {"name", j.name},
                               {"entityId", std::to_string(j.experiment_id)},
                               {"priority", j.priority},
                               {"weight", j.weight},
                               {"submissionTime", FormatRfc3339(j.submission_time)},
                               {"username", j.username},
                               {"resourcePool", j.resource_pool},
                               {"isPreemptible", true},
                               {"requestedSlots", j.requested_slots},
                               {"allocatedSlots", j.allocated_slots},
                               {"workspaceId", 1},
                               {"summary", {{"state", state}, {"jobsAhead", j.jobs_ahead}}}};
                  jobs.push_back({{"full", full}});
                }
                if (req.Query("orderBy") == "ORDER_BY_DESC") std::reverse(jobs.begin(), jobs.end());
                auto page = Paginate(req, jobs, "jobs");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("POST", "/api/v1/job-queues",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* updates = Field(*body, "updates", "updates");
                if (updates == nullptr || !updates->is_array()) {
                  return ErrorResponse(InvalidArgument("updates: required list"));
                }
                auto jobs = master->ListJobs();
                for (const auto& u : *updates) {
                  std::string job_id = u.value("jobId", u.value("job_id", std::string()));
                  const server::JobView* job = nullptr;
                  for (const auto& j : jobs) {
                    if (j.job_id == job_id) job = &j;
                  }
                  if (job == nullptr) {
                    return ErrorResponse(NotFound("job " + job_id + " not found among active jobs"));
                  }
                  json patch;
                  if (u.contains("priority")) {
                    patch = {{"resources", {{"priority", u["priority"]}}}};
                  } else if (u.contains("weight")) {
                    patch = {{"resources", {{"weight", u["weight"]}}}};
                  } else if (u.contains("resourcePool") || u.contains("resource_pool")) {
                    std::string p = u.value("resourcePool", u.value("resource_pool", std::string()));
                    if (p != "default") {
                      return ErrorResponse(InvalidArgument("resourcePool: no resource pool named '" +
                                                           p + "' (pools: default)"));
                    }
                    continue;
                  } else if (u.contains("aheadOf") || u.contains("behindOf")) {
                    return ErrorResponse(Unimplemented(
                        "moving a job ahead of or behind another is not supported yet; set its "
                        "priority instead"));
                  } else {
                    return ErrorResponse(InvalidArgument(
                        "updates: each needs one of priority, weight, resourcePool, aheadOf, behindOf"));
                  }
                  Status st = master->PatchExperiment(job->experiment_id, patch);
                  if (!st.ok()) return ErrorResponse(st);
                }
                return JsonResponse(json::object());
              }));
}

}  // namespace det::master::api
