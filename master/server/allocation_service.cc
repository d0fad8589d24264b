// AllocationService: requests and ends of allocations, preemption, rendezvous and listings.
#include "master/server/allocation_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "master/scheduler/pool_config.h"
#include "master/server/passwords.h"
#include "master/server/runtime_long_poll.h"
#include "master/server/slurm_service.h"
#include "master/store/session_token.h"

namespace det::master::server {

using nlohmann::json;

namespace {

std::string PoolNames(const scheduler::ResourcePoolsConfig& pools) {
  std::string names;
  for (const auto& p : pools.pools) names += (names.empty() ? "" : ", ") + p.pool_name;
  return names;
}

// Queued and never stored as placed: it can end with no decision of its own.
bool Unplaced(const AllocationRuntime* alloc) {
  return alloc != nullptr && alloc->state == AllocationRuntime::State::kPending && !alloc->stored;
}

}  // namespace

AllocationService::AllocationService(Deps deps) : deps_(deps) {}

AllocationService::~AllocationService() { Stop(); }

void AllocationService::Stop() {
  if (slurm_) slurm_->Stop();
}

std::string AllocationService::ResolvePool(const std::string& pool, int64_t slots) const {
  scheduler::AllocationRequest probe;
  probe.pool = pool;
  probe.slots = static_cast<int>(slots);
  return scheduler::ResolvePool(deps_.config->pools, probe);
}

Status AllocationService::CheckPoolExists(const std::string& pool) const {
  if (pool.empty() || deps_.config->pools.Find(pool) != nullptr) return Status::Ok();
  return InvalidArgument("resources.resource_pool: no resource pool named '" + pool +
                         "' (pools: " + PoolNames(deps_.config->pools) + ")");
}

std::string AllocationService::ResourcesId(const AllocationRuntime& alloc, size_t rank) {
  return rank == 0 ? alloc.id : alloc.id + "-" + std::to_string(rank);
}

const JobSpec* AllocationService::JobOf(const AllocationRuntime& alloc) const {
  auto it = jobs_.find(alloc.job_id);
  return it == jobs_.end() ? nullptr : &it->second;
}

bool AllocationService::Held(const AllocationRuntime& alloc) const {
  if (alloc.state != AllocationRuntime::State::kPending) return false;
  const JobSpec* job = JobOf(alloc);
  return job != nullptr && job->hold_queued;
}

std::string AllocationService::PoolOf(const AllocationRuntime& alloc) const {
  const JobSpec* job = JobOf(alloc);
  return job ? job->pool : ResolvePool("", alloc.slots);
}

AllocationRuntime* AllocationService::Find(const std::string& allocation_id) {
  auto it = allocations_.find(allocation_id);
  return it == allocations_.end() ? nullptr : it->second.get();
}

bool AllocationService::Has(const std::string& allocation_id) const {
  return allocations_.count(allocation_id) > 0;
}

void AllocationService::SetState(AllocationRuntime& alloc, AllocationRuntime::State state) {
  alloc.state = state;
  deps_.view->SetAllocation(alloc.trial_id, alloc.id, state);
  PublishHeld(alloc);
}

void AllocationService::PublishHeld(const AllocationRuntime& alloc) {
  if (alloc.resources.empty()) return;  // never placed: it held nothing
  std::vector<RuntimeView::Held> held;
  if (alloc.state != AllocationRuntime::State::kTerminated) {
    for (size_t rank = 0; rank < alloc.resources.size(); ++rank) {
      const AllocationRuntime::Resource& res = alloc.resources[rank];
      if (res.exited) continue;
      held.push_back({res.agent_id, res.slot_ids, ResourcesId(alloc, rank)});
    }
  }
  deps_.view->SetHeld(alloc.id, std::move(held));
}

void AllocationService::ErasePending(const std::string& allocation_id) {
  pending_.erase(std::remove(pending_.begin(), pending_.end(), allocation_id), pending_.end());
}

void AllocationService::Notify(const std::string& allocation_id) {
  deps_.waiters->Notify(AllocationKey(allocation_id));
}

void AllocationService::Log(const AllocationRuntime& alloc, const std::string& message) {
  deps_.logs->Append(alloc.trial_id, alloc.task_id, message);
}

void AllocationService::SetJob(JobSpec job) {
  std::string id = job.job_id;
  jobs_[id] = std::move(job);
}

void AllocationService::RemoveJob(const std::string& job_id) { jobs_.erase(job_id); }

std::string AllocationService::AllocationIdOf(const std::string& task_id, int64_t run_id) {
  return task_id + "." + std::to_string(run_id);
}

std::unique_ptr<AllocationRuntime> AllocationService::NewAllocation(
    const std::string& job_id, int64_t experiment_id, int64_t trial_id, const std::string& task_id,
    int64_t run_id, int64_t slots, int64_t queued_at) {
  auto alloc = std::make_unique<AllocationRuntime>();
  alloc->id = AllocationIdOf(task_id, run_id);
  alloc->task_id = task_id;
  alloc->job_id = job_id;
  alloc->trial_id = trial_id;
  alloc->experiment_id = experiment_id;
  alloc->slots = slots;
  alloc->queued_at = queued_at;  // its token is made when it is placed (Start)
  return alloc;
}

store::AllocationRow AllocationService::RowOf(const AllocationRuntime& alloc) const {
  store::AllocationRow row;
  if (auto job = jobs_.find(alloc.job_id); job != jobs_.end()) row.resource_pool = job->second.pool;
  row.allocation_id = alloc.id;
  row.task_id = alloc.task_id;
  row.trial_id = alloc.trial_id;
  row.state = std::string(core::AllocationStateName(alloc.state));
  row.token = alloc.token_digest;
  row.slots = alloc.slots;
  row.start_time = alloc.queued_at;
  for (const auto& res : alloc.resources) {
    if (row.agent_id.empty()) row.agent_id = res.agent_id;
    row.resources.push_back({{"agentId", res.agent_id}, {"slotIds", res.slot_ids}});
  }
  return row;
}

void AllocationService::Publish(std::unique_ptr<AllocationRuntime> alloc) {
  pending_.push_back(alloc->id);
  AllocationRuntime& ref = *alloc;
  allocations_[alloc->id] = std::move(alloc);
  SetState(ref, AllocationRuntime::State::kPending);
  RequestPass();
}

void AllocationService::Restore(const store::AllocationRow& ar, const std::string& job_id,
                                int64_t experiment_id, int64_t adopt_deadline) {
  auto alloc = std::make_unique<AllocationRuntime>();
  alloc->id = ar.allocation_id;
  alloc->task_id = ar.task_id;
  alloc->job_id = job_id;
  alloc->trial_id = ar.trial_id;
  alloc->experiment_id = experiment_id;
  alloc->slots = ar.slots;
  alloc->token_digest = ar.token;  // the token itself is not stored
  alloc->stored = true;
  deps_.auth->RegisterAllocationDigest(alloc->token_digest, alloc->id, ar.trial_id);
  for (const auto& r : ar.resources) {
    AllocationRuntime::Resource res;
    res.agent_id = r.value("agentId", std::string());
    for (const auto& sid : r.value("slotIds", json::array()))
      res.slot_ids.push_back(sid.get<int>());
    alloc->resources.push_back(std::move(res));
  }
  if (alloc->resources.empty() && !ar.agent_id.empty()) {
    alloc->resources.push_back({ar.agent_id, {}});  // stored before resources were recorded
  }
  alloc->queued_at = ar.start_time;
  auto state = alloc->resources.empty() ? AllocationRuntime::State::kPending
                                        : AllocationRuntime::State::kAssigned;
  alloc->adopt_deadline = adopt_deadline;
  alloc->restored = true;
  if (state == AllocationRuntime::State::kPending) pending_.push_back(alloc->id);
  AllocationRuntime& ref = *alloc;
  allocations_[alloc->id] = std::move(alloc);
  SetState(ref, state);
}

void AllocationService::Terminate(const std::string& allocation_id, bool graceful) {
  AllocationRuntime* alloc = Find(allocation_id);
  if (alloc == nullptr || alloc->state == AllocationRuntime::State::kTerminated) return;
  if (alloc->state == AllocationRuntime::State::kPending) {
    // Never started: end it here.
    alloc->kill_requested = true;
    ErasePending(alloc->id);
    Status st = HandleExit(*alloc, 0, "", false);
    if (!st.ok()) spdlog::error("ending allocation {}: {}", alloc->id, st.ToString());
    return;
  }
  if (graceful) {
    if (!alloc->preempt) {
      alloc->preempt = true;
      const JobSpec* job = JobOf(*alloc);
      int64_t timeout = job ? job->preemption_timeout_seconds : 0;
      alloc->kill_deadline = Now() + timeout * 1000000;
      Notify(alloc->id);
    }
    return;
  }
  alloc->kill_requested = true;
  KillResources(*alloc);
}

void AllocationService::Release(const std::string& allocation_id) {
  AllocationRuntime* alloc = Find(allocation_id);
  if (alloc == nullptr || alloc->state == AllocationRuntime::State::kPending ||
      alloc->state == AllocationRuntime::State::kTerminated) {
    return;
  }
  alloc->released = true;
  Terminate(allocation_id, true);
}

void AllocationService::MarkOutOfOps(const std::string& allocation_id) {
  if (AllocationRuntime* alloc = Find(allocation_id)) alloc->out_of_ops = true;
}

void AllocationService::KillResources(AllocationRuntime& alloc) {
  for (const auto& res : alloc.resources) {
    if (res.exited) continue;
    deps_.agents->Push(res.agent_id, KillCommand{alloc.id});
  }
}

std::vector<AllocationRuntime*> AllocationService::OnAgent(const std::string& agent_id) const {
  std::vector<AllocationRuntime*> out;
  for (const auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    for (const auto& res : a->resources) {
      if (res.agent_id == agent_id && !res.exited) {
        out.push_back(a.get());
        break;
      }
    }
  }
  return out;
}

Status AllocationService::HandleResourceExit(AllocationRuntime& alloc, const std::string& agent_id,
                                             int exit_code, const std::string& error,
                                             bool infrastructure) {
  if (alloc.state == AllocationRuntime::State::kTerminated) return Status::Ok();
  bool any_running = false;
  for (auto& res : alloc.resources) {
    if (res.agent_id == agent_id) res.exited = true;
    any_running = any_running || !res.exited;
  }
  PublishHeld(alloc);
  if (exit_code != 0 && !alloc.exit_code) {
    alloc.exit_code = exit_code;
    alloc.exit_error = error;
    // One failed process fails the allocation: the others are torn down with it.
    if (any_running) KillResources(alloc);
  }
  if (any_running) return Status::Ok();
  return HandleExit(alloc, alloc.exit_code.value_or(0), alloc.exit_code ? alloc.exit_error : error,
                    infrastructure);
}

Status AllocationService::HandleExit(AllocationRuntime& alloc, int exit_code,
                                     const std::string& error, bool infrastructure) {
  if (alloc.state == AllocationRuntime::State::kTerminated) return Status::Ok();
  bool never_started = alloc.state == AllocationRuntime::State::kPending;
  EndRecord(alloc);
  ErasePending(alloc.id);
  // Work the scheduler took back and had to kill is rescheduled like an infrastructure loss.
  if (alloc.released && alloc.kill_requested) infrastructure = true;
  store::DecisionWrites writes;
  if (alloc.stored) {  // one never placed has no row to end
    store::AllocationRow row = RowOf(alloc);
    row.end_time = Now();
    row.exit_code = exit_code;
    row.exit_reason = error;
    writes.allocations.push_back(std::move(row));
  }
  AllocationEnd end;
  end.exit_code = exit_code;
  end.error = error;
  end.never_started = never_started;
  end.killed_by_user = alloc.kill_requested;
  end.preemption_acked = alloc.preempt_acked || (never_started && alloc.kill_requested);
  end.infrastructure = infrastructure;
  end.maybe_out_of_ops = alloc.out_of_ops || alloc.restored;
  return owner_->AllocationEnded(alloc, end, std::move(writes));
}

void AllocationService::EndRecord(AllocationRuntime& alloc) {
  SetState(alloc, AllocationRuntime::State::kTerminated);
  if (!alloc.token_digest.empty()) deps_.auth->EndAllocationDigest(alloc.token_digest);
  if (slurm_) slurm_->Forget(alloc.id);  // its Slurm job ends with it
  Notify(alloc.id);
  ended_.push_back(alloc.id);
}

bool AllocationService::IsUnplaced(const std::string& allocation_id) {
  return Unplaced(Find(allocation_id));
}

void AllocationService::DropUnplaced(const std::vector<std::string>& allocation_ids) {
  std::unordered_set<std::string> dropped;
  for (const std::string& id : allocation_ids) {
    AllocationRuntime* alloc = Find(id);
    if (!Unplaced(alloc)) continue;
    alloc->kill_requested = true;
    EndRecord(*alloc);
    dropped.insert(id);
  }
  if (dropped.empty()) return;
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const std::string& id) { return dropped.count(id) > 0; }),
                 pending_.end());
}

void AllocationService::Reap() {
  for (const std::string& id : ended_) {
    auto it = allocations_.find(id);
    if (it != allocations_.end() && it->second->state == AllocationRuntime::State::kTerminated) {
      allocations_.erase(it);
    }
  }
  ended_.clear();
}

void AllocationService::WaitPreemption(const std::string& allocation_id, int64_t timeout_ms,
                                       Reply<bool> reply) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  deps_.loop->Post([this, allocation_id, deadline, timeout_ms, reply = std::move(reply)]() mutable {
    runtime_role.Assume();
    auto step = std::make_shared<std::function<bool(bool)>>(
        [this, allocation_id, reply = std::move(reply)](bool final) {
          runtime_role.Assume();
          AllocationRuntime* alloc = Find(allocation_id);
          if (alloc == nullptr) {
            Status st = deps_.store->GetAllocation(allocation_id).status();
            if (st.ok()) {
              reply(true);  // an ended allocation should stop
            } else {
              reply(st);
            }
            return true;
          }
          if (alloc->preempt || alloc->state == AllocationRuntime::State::kTerminated) {
            reply(true);
            return true;
          }
          if (!final) return false;
          reply(false);
          return true;
        });
    LongPollOnLoop(deps_.loop, deps_.waiters, AllocationKey(allocation_id), deadline,
                   std::move(step), timeout_ms <= 0);
  });
}

void AllocationService::AckPreemption(const std::string& allocation_id, Done<Status> done) {
  deps_.loop->Decide(
      [this, allocation_id]() ON_RUNTIME -> Status {
        AllocationRuntime* alloc = Find(allocation_id);
        if (alloc == nullptr) return NotFound("allocation " + allocation_id + " not found");
        alloc->preempt_acked = true;
        return Status::Ok();
      },
      std::move(done));
}

Status AllocationService::AckPreemption(const std::string& allocation_id) {
  std::promise<Status> p;
  AckPreemption(allocation_id, [&p](Status st) { p.set_value(std::move(st)); });
  return p.get_future().get();
}

void AllocationService::Rendezvous(const Principal& who, const std::string& allocation_id,
                                   const std::string& resources_id, int64_t timeout_ms,
                                   Reply<json> reply) {
  if (who.is_allocation && who.allocation_id != allocation_id) {
    reply(PermissionDenied("allocation " + who.allocation_id + " may not rendezvous for " +
                           allocation_id));
    return;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  deps_.loop->Post([this, allocation_id, resources_id, deadline,
                    reply = std::move(reply)]() mutable {
    runtime_role.Assume();
    auto step = std::make_shared<std::function<bool(bool)>>([this, allocation_id, resources_id,
                                                             reply = std::move(reply)](bool final) {
      runtime_role.Assume();
      AllocationRuntime* found = Find(allocation_id);
      if (found == nullptr || found->state == AllocationRuntime::State::kTerminated) {
        reply(NotFound("allocation " + allocation_id + " is not running"));
        return true;
      }
      const AllocationRuntime& alloc = *found;
      std::optional<size_t> rank;
      bool all_started = !alloc.resources.empty();
      for (size_t i = 0; i < alloc.resources.size(); ++i) {
        if (ResourcesId(alloc, i) == resources_id) rank = i;
        all_started = all_started && alloc.resources[i].started;
      }
      if (!alloc.resources.empty() && !rank) {
        reply(NotFound("allocation " + allocation_id + " has no resources " + resources_id));
        return true;
      }
      if (all_started) {
        json addrs = json::array(), slots = json::array();
        for (const auto& res : alloc.resources) {
          std::optional<AgentService::Agent> agent = deps_.agents->Find(res.agent_id);
          addrs.push_back(agent ? agent->address : "127.0.0.1");
          slots.push_back(res.slot_ids.size());
        }
        reply(json{{"rendezvousInfo", {{"addresses", addrs}, {"rank", *rank}, {"slots", slots}}}});
        return true;
      }
      if (!final) return false;
      reply(Unavailable("rendezvous of allocation " + allocation_id +
                        " timed out: not every process has started yet; retry"));
      return true;
    });
    LongPollOnLoop(deps_.loop, deps_.waiters, AllocationKey(allocation_id), deadline,
                   std::move(step));
  });
}

std::vector<AllocationSummaryView> AllocationService::ListAllocations() {
  return deps_.loop->Read<std::vector<AllocationSummaryView>>([this]() {
    runtime_role.Assume();
    std::vector<AllocationSummaryView> out;
    for (const auto& [id, a] : allocations_) {
      if (a->state == AllocationRuntime::State::kTerminated) continue;
      AllocationSummaryView v;
      v.allocation_id = a->id;
      v.task_id = a->task_id;
      v.trial_id = a->trial_id;
      v.experiment_id = a->experiment_id;
      v.slots_needed = a->slots;
      v.registered_time = a->queued_at;
      v.state = core::PresentedAllocationState(a->state);
      v.resource_pool = PoolOf(*a);
      if (const JobSpec* job = JobOf(*a)) v.priority = job->priority;
      v.name = "Trial " + std::to_string(v.trial_id) + " (Experiment " +
               std::to_string(v.experiment_id) + ")";
      for (size_t rank = 0; rank < a->resources.size(); ++rank) {
        const auto& res = a->resources[rank];
        if (res.exited) continue;
        v.resources.push_back({ResourcesId(*a, rank), res.agent_id, res.slot_ids, res.started});
      }
      out.push_back(std::move(v));
    }
    return out;
  });
}

}  // namespace det::master::server
