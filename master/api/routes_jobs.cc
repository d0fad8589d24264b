// The job queue: resource pools, job-queues-v2, and job updates.
#include <set>

#include "common/clock.h"
#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/scheduler/pool_bindings.h"
#include "master/scheduler/pool_config.h"
#include "master/server/workspace_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

void RegisterJobRoutes(server::Router* router, server::Master* master) {
  router->Add(
      "GET", "/api/v1/resource-pools",
      WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
        const scheduler::ResourcePoolsConfig& cfg = master->config().pools;
        auto agents = master->allocations()->ListAgents();
        auto jobs = master->allocations()->ListJobs();
        std::string master_url =
            "http://" + master->config().bind_address + ":" + std::to_string(master->config().port);
        // `unbound=true`: only the pools bound to no workspace.
        scheduler::PoolBindings bound;
        if (QueryBool(req, "unbound", false)) {
          auto b = master->workspaces()->Bindings();
          if (!b.ok()) return ErrorResponse(b.status());
          bound = std::move(b).value();
        }
        json pools = json::array();
        for (const auto& p : cfg.pools) {
          if (auto it = bound.find(p.pool_name); it != bound.end() && !it->second.empty()) continue;
          int64_t slots = 0, used = 0, count = 0;
          std::set<std::string> types;
          for (const auto& a : agents) {
            if (!a.connected || a.resource_pool != p.pool_name) continue;
            ++count;
            slots += static_cast<int64_t>(a.slots.size());
            used += static_cast<int64_t>(a.slot_allocations.size());
            for (const auto& s : a.slots) types.insert(s.value("type", "cpu"));
          }
          // Determined reports one device type per pool; an empty pool counts as CPU.
          std::string slot_type = types.count("cuda")   ? "TYPE_CUDA"
                                  : types.count("rocm") ? "TYPE_ROCM"
                                                        : "TYPE_CPU";
          int64_t queued = 0, scheduled = 0;
          for (const auto& j : jobs) {
            if (j.resource_pool != p.pool_name) continue;
            ++(j.scheduled ? scheduled : queued);
          }
          bool fair = p.scheduler.type == scheduler::SchedulerType::kFairShare;
          // Static pools only: the cloud provisioning fields are empty, as Determined
          // shows them for a pool without a provider.
          json pool = {
              {"name", p.pool_name},
              {"description", p.description},
              {"type", "RESOURCE_POOL_TYPE_STATIC"},
              {"numAgents", count},
              {"slotsAvailable", slots},
              {"slotsUsed", used},
              {"slotType", slot_type},
              {"auxContainerCapacity", p.max_aux_containers_per_agent * count},
              {"auxContainersRunning", 0},
              {"defaultComputePool", p.pool_name == cfg.default_compute_pool},
              {"defaultAuxPool", p.pool_name == cfg.default_aux_pool},
              {"preemptible", fair || p.scheduler.preemption},
              {"minAgents", 0},
              {"maxAgents", 0},
              {"instanceType", ""},
              {"masterUrl", master_url},
              {"masterCertName", ""},
              {"startupScript", ""},
              {"containerStartupScript", ""},
              {"agentDockerNetwork", ""},
              {"agentDockerRuntime", ""},
              {"agentDockerImage", ""},
              {"agentFluentImage", ""},
              {"maxIdleAgentPeriod", 0},
              {"maxAgentStartingPeriod", 0},
              {"location", "on-prem"},
              {"imageId", ""},
              {"auxContainerCapacityPerAgent", p.max_aux_containers_per_agent},
              {"schedulerType", fair ? "SCHEDULER_TYPE_FAIR_SHARE" : "SCHEDULER_TYPE_PRIORITY"},
              {"schedulerFittingPolicy",
               p.scheduler.fitting_policy == scheduler::FittingPolicy::kBest
                   ? "FITTING_POLICY_BEST"
                   : "FITTING_POLICY_WORST"},
              {"clusterName", master->config().cluster_name},
              {"resourceManagerMetadata", json::object()},
              {"stats", {{"queuedCount", queued}, {"scheduledCount", scheduled}}},
              {"details", json::object()},
              {"maxAuxContainersPerAgent", p.max_aux_containers_per_agent}};
          if (!fair) {
            pool["details"] = {{"priorityScheduler",
                                {{"preemption", p.scheduler.preemption},
                                 {"defaultPriority", p.scheduler.default_priority}}}};
          }
          if (p.provider) {  // a pool that grows (provisioner): its bounds, seconds
            pool["minAgents"] = p.provider->min_instances;
            pool["maxAgents"] = p.provider->max_instances;
            pool["maxIdleAgentPeriod"] = p.provider->max_idle_agent_period_ms / 1000.0;
            pool["maxAgentStartingPeriod"] = p.provider->max_agent_starting_period_ms / 1000.0;
          }
          pools.push_back(pool);
        }
        auto page = Paginate(req, pools, "resourcePools");
        return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
      }));

  router->Add("GET", "/api/v1/job-queues-v2",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                std::string pool = req.Query("resourcePool");
                if (Status st = master->allocations()->CheckPoolExists(pool); !st.ok()) {
                  return ErrorResponse(InvalidArgument("resourcePool: " + st.message()));
                }
                json jobs = json::array();
                for (const auto& j : master->allocations()->ListJobs(pool)) {
                  const std::string& state = j.state;
                  json full = {{"jobId", j.job_id},
                               {"type", j.type},
                               {"name", j.name},
                               {"entityId", j.entity_id.empty() ? std::to_string(j.experiment_id)
                                                                : j.entity_id},
                               {"priority", j.priority},
                               {"weight", j.weight},
                               {"submissionTime", FormatRfc3339(j.submission_time)},
                               {"username", j.username},
                               {"resourcePool", j.resource_pool},
                               {"isPreemptible", j.preemptible},
                               {"requestedSlots", j.requested_slots},
                               {"allocatedSlots", j.allocated_slots},
                               {"workspaceId", 1},
                               {"qPosition", j.position},
                               {"summary", {{"state", state}, {"jobsAhead", j.jobs_ahead}}}};
                  if (!j.rm_detail.empty()) full["resourceManagerDetail"] = j.rm_detail;
                  jobs.push_back({{"full", full}});
                }
                Result<std::optional<bool>> order = ParseOrderBy(req.Query("orderBy"));
                if (!order.ok()) return ErrorResponse(order.status());
                if (order->value_or(false)) std::reverse(jobs.begin(), jobs.end());
                auto page = Paginate(req, jobs, "jobs");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  // Each pool's queued and scheduled jobs (all pools, or those named by resourcePools).
  router->Add("GET", "/api/v1/job-queues/stats",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                std::vector<std::string> names = req.QueryAll("resourcePools");
                for (const std::string& name : names) {
                  if (Status st = master->allocations()->CheckPoolExists(name); !st.ok()) {
                    return ErrorResponse(InvalidArgument("resourcePools: " + st.message()));
                  }
                }
                if (names.empty()) {
                  for (const auto& p : master->config().pools.pools) names.push_back(p.pool_name);
                }
                auto jobs = master->allocations()->ListJobs();
                json results = json::array();
                for (const std::string& name : names) {
                  int64_t queued = 0, scheduled = 0;
                  for (const auto& j : jobs) {
                    if (j.resource_pool == name) ++(j.scheduled ? scheduled : queued);
                  }
                  results.push_back(
                      {{"resourcePool", name},
                       {"stats", {{"queuedCount", queued}, {"scheduledCount", scheduled}}},
                       {"aggregates", json::array()}});
                }
                return JsonResponse({{"results", results}});
              }));

  router->Add("POST", "/api/v1/job-queues",
              WithAuth(master, Checked(core::Action::kModify),
                       [master](HttpRequest& req, const Principal& who) {
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         const json* updates = Field(*body, "updates", "updates");
                         if (updates == nullptr || !updates->is_array()) {
                           return ErrorResponse(InvalidArgument("updates: required list"));
                         }
                         // A malformed batch (unknown job, not one change each) changes nothing.
                         std::vector<std::pair<std::string, json>> todo;
                         std::set<std::string> known;
                         for (const auto& j : master->allocations()->ListJobs())
                           known.insert(j.job_id);
                         for (size_t i = 0; i < updates->size(); ++i) {
                           const json& u = (*updates)[i];
                           std::string where = "updates[" + std::to_string(i) + "]";
                           if (!u.is_object()) {
                             return ErrorResponse(InvalidArgument(where + ": must be an object"));
                           }
                           std::string job_id = u.value("jobId", u.value("job_id", std::string()));
                           if (!known.count(job_id)) {
                             return ErrorResponse(NotFound(where + ".jobId: job '" + job_id +
                                                           "' is not in any queue"));
                           }
                           // Moving a job in the queue changes its experiment: its owner or an
                           // admin.
                           if (Status st = AuthorizeJob(master, who, job_id); !st.ok()) {
                             return ErrorResponse(st);
                           }
                           json change = u;
                           change.erase("jobId");
                           change.erase("job_id");
                           if (change.size() != 1) {
                             return ErrorResponse(InvalidArgument(
                                 where +
                                 ": needs exactly one of priority, weight, resourcePool, aheadOf, "
                                 "behindOf"));
                           }
                           todo.emplace_back(job_id, change);
                         }
                         for (const auto& [job_id, change] : todo) {
                           Status st = master->allocations()->UpdateJob(job_id, change);
                           if (!st.ok()) return ErrorResponse(st);
                         }
                         return JsonResponse(json::object());
                       }));
}

}  // namespace det::master::api
