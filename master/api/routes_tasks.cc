// Tasks: GET /api/v1/tasks, every live allocation (a trial's run, queued or holding slots) as
// Determined's v1AllocationSummary, keyed by allocation id (`det task list`, `det slot list`).
#include "common/clock.h"
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/task_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

// The v1Device of each agent's slot, to describe the slots an allocation holds.
std::map<std::string, std::map<int, json>> DevicesByAgent(server::Master* master) {
  std::map<std::string, std::map<int, json>> out;
  for (const auto& a : master->allocations()->ListAgents()) {
    for (const auto& s : a.slots) {
      out[a.id][s.value("id", 0)] = SlotJson(a, s)["device"];
    }
  }
  return out;
}

json AllocationSummaryJson(const server::AllocationSummaryView& v,
                           const scheduler::ResourcePoolsConfig& pools,
                           const std::map<std::string, std::map<int, json>>& devices) {
  const scheduler::PoolConfig* pool = pools.Find(v.resource_pool);
  bool fair = pool != nullptr && pool->scheduler.type == scheduler::SchedulerType::kFairShare;
  int64_t priority = v.priority.value_or(pool != nullptr ? pool->scheduler.default_priority
                                                         : scheduler::kDefaultPriority);
  json resources = json::array();
  for (const auto& r : v.resources) {
    json devs = json::array();
    auto agent = devices.find(r.agent_id);
    for (int slot : r.slot_ids) {
      json d = {{"id", slot}};
      if (agent != devices.end() && agent->second.count(slot)) d = agent->second.at(slot);
      devs.push_back(d);
    }
    json summary = {{"resourcesId", r.resources_id},
                    {"resourcesType", "agent"},
                    {"allocationId", v.allocation_id},
                    {"agentDevices", {{r.agent_id, {{"devices", devs}}}}},
                    {"containerId", r.resources_id}};
    if (r.started) summary["started"] = json::object();
    resources.push_back(std::move(summary));
  }
  json out = {{"taskId", v.task_id},
              {"allocationId", v.allocation_id},
              {"name", v.name},
              {"registeredTime", FormatRfc3339(v.registered_time)},
              {"resourcePool", v.resource_pool},
              {"slotsNeeded", v.slots_needed},
              {"schedulerType", fair ? "fair_share" : "priority"},
              {"priority", priority},
              {"proxyPorts", json::array()},
              {"state", v.state}};
  // Determined leaves resources unset until the allocation is assigned.
  if (!v.resources.empty()) out["resources"] = resources;
  return out;
}

}  // namespace

void RegisterTaskRoutes(server::Router* router, server::Master* master) {
  router->Add(
      "GET", "/api/v1/tasks",
      WithAuth(master, Auth::kUser, [master](HttpRequest&, const Principal&) {
        auto devices = DevicesByAgent(master);
        json by_id = json::object();
        for (const auto& v : master->allocations()->ListAllocations()) {
          by_id[v.allocation_id] = AllocationSummaryJson(v, master->config().pools, devices);
        }
        // Commands, notebooks, shells and TensorBoards (task_service.h).
        for (const server::TaskView& t : master->tasks()->LiveTasks()) {
          server::AllocationSummaryView v;
          v.task_id = t.row.task_id;
          v.allocation_id =
              t.row.allocation_id.empty() ? t.row.task_id + ".1" : t.row.allocation_id;
          v.name = t.row.description;
          v.resource_pool = t.resource_pool;
          // A const json's operator[] on a missing key is undefined: read with find.
          auto res = t.row.config.find("resources");
          v.slots_needed = res != t.row.config.end() && res->is_object() ? res->value("slots", 0)
                                                                          : 0;
          v.registered_time = t.row.registered_time;
          v.priority = t.priority;
          v.state = t.row.state == "STATE_QUEUED"     ? "STATE_PENDING"
                    : t.row.state == "STATE_STARTING" ? "STATE_ASSIGNED"
                                                      : "STATE_RUNNING";
          if (!t.row.agent_id.empty()) {
            v.resources.push_back(
                {v.allocation_id, t.row.agent_id, t.row.slot_ids, t.row.state != "STATE_STARTING"});
          }
          by_id[v.allocation_id] = AllocationSummaryJson(v, master->config().pools, devices);
        }
        return JsonResponse({{"allocationIdToSummary", by_id}});
      }));
}

}  // namespace det::master::api
