#include "master/scheduler/pool_view.h"

#include <algorithm>

namespace det::master::scheduler {
namespace {

bool InPool(const std::string& item_pool, const std::string& pool_name) {
  return item_pool == pool_name || (item_pool.empty() && pool_name == "default");
}

}  // namespace

PoolView MakePoolView(const PoolConfig& config, const ClusterSnapshot& snapshot) {
  PoolView view;
  std::vector<const Agent*> agents;
  for (const Agent& a : snapshot.agents) {
    if (InPool(a.pool, config.pool_name)) agents.push_back(&a);
  }
  std::map<std::string, const Job*> jobs_by_id;
  for (const Job& j : snapshot.jobs) jobs_by_id[j.id] = &j;
  for (const AllocationRequest& r : snapshot.requests) {
    if (!InPool(r.pool, config.pool_name)) continue;
    view.requests.push_back(&r);
    if (view.jobs.count(r.job_id)) continue;
    ResolvedJob rj;
    rj.id = r.job_id;
    auto it = jobs_by_id.find(r.job_id);
    if (it != jobs_by_id.end()) {
      const Job& j = *it->second;
      rj.priority = j.priority.value_or(config.scheduler.default_priority);
      rj.submission_time_us = j.submission_time_us;
      rj.position = j.position.value_or(QueuePosition::FromMicros(j.submission_time_us));
      rj.weight = j.weight;
      rj.max_slots = j.max_slots;
    } else {
      rj.priority = config.scheduler.default_priority;
      rj.submission_time_us = r.request_time_us;
      rj.position = QueuePosition::FromMicros(r.request_time_us);
    }
    view.jobs[r.job_id] = rj;
  }
  std::stable_sort(view.requests.begin(), view.requests.end(),
                   [&](const AllocationRequest* a, const AllocationRequest* b) {
                     int64_t sa = view.jobs.at(a->job_id).submission_time_us;
                     int64_t sb = view.jobs.at(b->job_id).submission_time_us;
                     if (sa != sb) return sa < sb;
                     if (a->request_time_us != b->request_time_us) {
                       return a->request_time_us < b->request_time_us;
                     }
                     return a->id < b->id;
                   });
  view.agents = BuildAgentStates(agents, view.requests);
  return view;
}

std::vector<const AllocationRequest*> PriorityOrder(const PoolView& view) {
  std::vector<const AllocationRequest*> out = view.requests;  // already in task-list order
  std::stable_sort(out.begin(), out.end(), [&](const AllocationRequest* a,
                                               const AllocationRequest* b) {
    const ResolvedJob& ja = view.jobs.at(a->job_id);
    const ResolvedJob& jb = view.jobs.at(b->job_id);
    if (ja.priority != jb.priority) return ja.priority < jb.priority;
    return ja.position < jb.position;
  });
  return out;
}

}  // namespace det::master::scheduler
