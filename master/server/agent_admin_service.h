#pragma once
// AgentAdminService: agents and slots an operator disabled (POST /api/v1/agents/{id}/disable,
// /enable, /agents/{id}/slots/{slotId}/disable, /enable, as Determined's). The scheduler
// (scheduler::Agent's enabled and draining) places nothing new on a disabled agent or slot; a
// draining agent keeps what runs on it, an agent disabled without drain, or a disabled slot,
// has its work killed (the master's tick). Each change is stored (migration 0020) before it
// takes effect, and Load restores them when the master starts.

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

struct AgentAdminState {
  bool enabled = true;
  bool draining = false;  // disabled with drain: running work stays
};

class AgentAdminService {
 public:
  explicit AgentAdminService(store::Store* store) : store_(store) {}

  // Reads the stored state (replacing what is in memory).
  Status Load();
  Status SetAgent(const std::string& agent_id, bool enabled, bool drain);
  Status SetSlot(const std::string& agent_id, int slot_id, bool enabled);
  AgentAdminState Agent(const std::string& agent_id) const;
  bool SlotEnabled(const std::string& agent_id, int slot_id) const;
  // Agents disabled without drain: whatever still runs on them is to be killed.
  std::vector<std::string> KillingAgents() const;
  // Disabled slots (a slot has no drain): whatever still runs on them is to be killed.
  std::vector<std::pair<std::string, int>> DisabledSlots() const;

 private:
  store::Store* store_;
  mutable std::mutex mu_;  // guards the maps; held across the store write so writes stay ordered
  std::map<std::string, AgentAdminState> agents_;  // only agents not in the default state
  std::set<std::pair<std::string, int>> disabled_slots_;
};

}  // namespace det::master::server
