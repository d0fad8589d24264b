#pragma once
// Builders shared by the scheduler's unit tests.

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "master/scheduler/types.h"

namespace det::master::scheduler::testing {

inline Agent MakeAgent(std::string id, int slots, std::string pool = "default") {
  Agent a;
  a.id = std::move(id);
  a.pool = std::move(pool);
  a.slot_ids.resize(slots);
  std::iota(a.slot_ids.begin(), a.slot_ids.end(), 0);
  return a;
}

inline Job MakeJob(std::string id, int64_t submitted, std::optional<int> priority = std::nullopt) {
  Job j;
  j.id = std::move(id);
  j.submission_time_us = submitted;
  j.priority = priority;
  return j;
}

inline AllocationRequest MakeRequest(std::string id, std::string job_id, int slots,
                                     int64_t requested = 0) {
  AllocationRequest r;
  r.id = std::move(id);
  r.job_id = std::move(job_id);
  r.slots = slots;
  r.request_time_us = requested;
  return r;
}

// A request that already holds `slots` slots starting at `first_slot` on `agent`.
inline AllocationRequest Running(AllocationRequest r, const std::string& agent, int first_slot = 0) {
  std::vector<int> ids(r.slots);
  std::iota(ids.begin(), ids.end(), first_slot);
  r.allocated = std::vector<AgentSlots>{{agent, ids}};
  return r;
}

inline std::vector<std::string> StartedIds(const ScheduleDecision& d) {
  std::vector<std::string> out;
  for (const Allocation& a : d.to_allocate) out.push_back(a.request_id);
  return out;
}

}  // namespace det::master::scheduler::testing
