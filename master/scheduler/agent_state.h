#pragma once
// AgentState: the scheduler's mutable working copy of one agent (Determined's agentState).
// Built from a snapshot Agent plus the allocations that sit on it; schedulers reserve and free
// slots on copies of it while they decide.
//
// Capacity rules (§5.1):
// 1. NumSlots = devices; 0 when disabled; = used slots when draining.
// 2. NumEmptySlots = NumSlots - used, and 0 when disabled or draining.
// 3. Zero-slot capacity = max_zero_slot_containers (0 disabled, = used when draining), with the
//    same emptiness rule. Slot ids are handed out lowest first.

#include <set>
#include <string>
#include <vector>

#include "master/scheduler/types.h"

namespace det::master::scheduler {

class AgentState {
 public:
  explicit AgentState(const Agent& agent);

  const std::string& id() const { return id_; }
  int NumSlots() const;
  int NumUsedSlots() const { return static_cast<int>(used_.size()); }
  int NumEmptySlots() const;
  int NumZeroSlots() const;
  int NumUsedZeroSlots() const { return used_zero_; }
  int NumEmptyZeroSlots() const;
  bool Idle() const { return used_.empty() && used_zero_ == 0; }

  // Reserves `slots` free slot ids (lowest first), or one zero-slot unit when slots == 0.
  std::vector<int> Allocate(int slots);
  // Marks the given ids used (ids not on the agent are ignored); empty = one zero-slot unit.
  void MarkUsed(const std::vector<int>& slot_ids);
  // Frees what MarkUsed/Allocate took.
  void Release(const std::vector<int>& slot_ids);
  // The same agent with nothing running on it.
  AgentState Emptied() const;

 private:
  std::string id_;
  std::vector<int> slot_ids_;  // sorted
  std::set<int> used_;
  int max_zero_ = 0;
  int used_zero_ = 0;
  bool enabled_ = true;
  bool draining_ = false;
};

// Agents of one pool, sorted by id; allocations of the given requests are marked used.
std::vector<AgentState> BuildAgentStates(const std::vector<const Agent*>& agents,
                                         const std::vector<const AllocationRequest*>& requests);

}  // namespace det::master::scheduler
