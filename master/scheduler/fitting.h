#pragma once
// Placement of allocation requests onto agents. Pure: snapshot in, decisions out.
//
// FindFits (Determined's findFits, §5.2). Rules:
// 1. Scores: BestFit = 1/(1+empty slots) when the agent has used slots or the task needs slots,
//    else 1/(1+empty zero-slot units) (0 without zero-slot capacity). WorstFit = empty/total
//    (resp. empty zero-slot/total zero-slot; 0 when the total is 0).
// 2. Candidate order: score descending, then hash distance ascending, then agent id ascending.
// 3. Hash distance = Md5Prefix64(allocation id) - Md5Prefix64(agent id), wrapping (uint64), where
//    Md5Prefix64 reads the first 8 MD5 bytes little-endian, exactly as Determined does.
// 4. Shared fit: among agents not blocked for the task with empty slots >= slots needed (and a
//    free zero-slot unit when slots needed == 0), take the best candidate.
// 5. Otherwise a single-node task or one needing <= 1 slot has no fit.
// 6. Dedicated multi-agent fit: only fully idle, non-blocked agents, grouped by free-slot count;
//    sizes tried from largest: if count*size >= needed and needed % size == 0, take needed/size
//    best candidates of that size, each contributing ALL its slots (all or nothing).
// 7. With allow_heterogeneous_fits: greedy largest size first, min(remaining/size, count) agents
//    per size until exactly satisfied; otherwise no fit (no backtracking).
//
// PlaceFifo is the simple placement the master used before the pool schedulers existed:
// 1. Requests are considered in queue order; a request that does not fit does not block a
//    later one that does (backfill).
// 2. A request goes to one agent with enough free slots; among those, the one with the fewest
//    free slots (best fit), ties broken by agent id.
// 3. Slot ids are taken lowest first. Zero-slot requests go to the agent with the most free
//    slots, ties by agent id.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "master/scheduler/agent_state.h"
#include "master/scheduler/types.h"

namespace det::master::scheduler {

enum class FittingPolicy { kBest, kWorst };

double BestFit(const AllocationRequest& request, const AgentState& agent);
double WorstFit(const AllocationRequest& request, const AgentState& agent);
uint64_t HashDistance(std::string_view allocation_id, std::string_view agent_id);

// One agent's part of a fit: the index into the agent vector and the slots taken there.
struct Fit {
  size_t agent_index = 0;
  int slots = 0;
};

// Empty when the request does not fit. Several entries = a dedicated multi-agent fit.
std::vector<Fit> FindFits(const AllocationRequest& request, const std::vector<AgentState>& agents,
                          FittingPolicy policy, bool allow_heterogeneous_fits);

// Reserves the fits on `agents` and returns the slots taken per agent.
std::vector<AgentSlots> ApplyFits(const std::vector<Fit>& fits, std::vector<AgentState>* agents);

// Frees an allocation's slots on `agents` (parts on unknown agents are ignored).
void RemoveFromAgents(const std::vector<AgentSlots>& allocated, std::vector<AgentState>* agents);

// ---- Legacy FIFO placement -------------------------------------------------------------------

struct AgentCapacity {
  std::string agent_id;
  std::vector<int> free_slot_ids;
  int64_t total_slots = 0;
};

struct SlotRequest {
  std::string request_id;
  int64_t slots = 1;
};

struct Placement {
  std::string request_id;
  std::string agent_id;
  std::vector<int> slot_ids;
};

std::vector<Placement> PlaceFifo(const std::vector<SlotRequest>& requests,
                                 std::vector<AgentCapacity> agents);

}  // namespace det::master::scheduler
