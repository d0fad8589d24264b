#pragma once
// Value types of the scheduling library: the snapshot the master hands in each tick and the
// decisions it gets back. Nothing here owns I/O, a clock or a thread.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "master/scheduler/queue_position.h"

namespace det::master::scheduler {

// Lower number = more important. Determined's agent resource manager uses 1..99.
inline constexpr int kMinPriority = 1;
inline constexpr int kMaxPriority = 99;
inline constexpr int kDefaultPriority = 42;
inline constexpr int kDefaultMaxZeroSlotContainers = 100;

struct Agent {
  std::string id;
  std::string pool;
  std::vector<int> slot_ids;       // every device slot of the agent
  std::vector<int> used_slot_ids;  // slots busy for reasons outside the snapshot's allocations
  int max_zero_slot_containers = kDefaultMaxZeroSlotContainers;
  int used_zero_slot_containers = 0;  // zero-slot units busy outside the snapshot's allocations
  bool enabled = true;
  bool draining = false;  // a draining agent keeps what runs but accepts nothing new
};

// One group per job (Determined's tasklist.Group).
struct Job {
  std::string id;
  std::optional<int> max_slots;   // fair share only (quirk 7.6: the priority scheduler ignores it)
  double weight = 1.0;            // fair share only
  std::optional<int> priority;    // priority only; unset -> the pool's default_priority
  int64_t submission_time_us = 0;
  std::optional<QueuePosition> position;  // unset -> QueuePosition::FromMicros(submission)
};

struct AgentSlots {
  std::string agent_id;
  std::vector<int> slot_ids;  // empty for a zero-slot task
  friend bool operator==(const AgentSlots&, const AgentSlots&) = default;
};

struct AllocationRequest {
  std::string id;  // allocation id
  std::string job_id;
  std::string pool;  // empty -> the default compute/aux pool (see ResolvePool)
  int slots = 1;
  bool preemptible = true;
  bool single_node = false;  // resources.is_single_node: never split across agents
  int64_t request_time_us = 0;
  std::vector<std::string> blocked_agents;  // agents this task may not use
  // Set when the request holds resources (it is "scheduled"); one entry per agent.
  std::optional<std::vector<AgentSlots>> allocated;
  bool backfilled = false;    // started as "scheduled backfilled" (Allocation::backfilled)
  bool user_visible = true;   // counted in the job queue (det job list)
};

struct ClusterSnapshot {
  std::vector<Agent> agents;
  std::vector<Job> jobs;
  std::vector<AllocationRequest> requests;
};

struct Allocation {
  std::string request_id;
  std::vector<AgentSlots> agents;  // several entries for a multi-agent (dedicated) fit
  bool backfilled = false;         // "scheduled backfilled" in the job queue
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

struct ScheduleDecision {
  std::vector<Allocation> to_allocate;   // in the order they were decided
  std::vector<std::string> to_release;   // request ids to preempt, sorted
};

}  // namespace det::master::scheduler
