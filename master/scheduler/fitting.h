#pragma once
// Placement of allocation requests onto agents. Pure: snapshot in, decisions out.
//
// Rules (issue #5 extends them with pools, priorities and multi-agent fits):
// 1. Requests are considered in queue order; a request that does not fit does not block a
//    later one that does (backfill).
// 2. A request goes to one agent with enough free slots; among those, the one with the fewest
//    free slots (best fit), ties broken by agent id.
// 3. Slot ids are taken lowest first. Zero-slot requests go to the agent with the most free
//    slots, ties by agent id.

#include <cstdint>
#include <string>
#include <vector>

namespace det::master::scheduler {

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
