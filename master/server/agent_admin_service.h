#pragma once
// AgentAdminService: agents and slots an operator disabled (POST /api/v1/agents/{id}/disable,
// /enable, /agents/{id}/slots/{slotId}/disable, /enable, as Determined's). The scheduler
// (scheduler::Agent's enabled and draining) places nothing new on a disabled agent or slot; a
// draining agent keeps what runs on it. Kept in memory: a restarted master starts with every
// agent and slot enabled.

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace det::master::server {

struct AgentAdminState {
  bool enabled = true;
  bool draining = false;  // disabled with drain: running work stays
};

class AgentAdminService {
 public:
  void SetAgent(const std::string& agent_id, bool enabled, bool drain);
  void SetSlot(const std::string& agent_id, int slot_id, bool enabled);
  AgentAdminState Agent(const std::string& agent_id) const;
  bool SlotEnabled(const std::string& agent_id, int slot_id) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, AgentAdminState> agents_;  // only agents not in the default state
  std::set<std::pair<std::string, int>> disabled_slots_;
};

}  // namespace det::master::server
