#include "master/server/agent_admin_service.h"

namespace det::master::server {

void AgentAdminService::SetAgent(const std::string& agent_id, bool enabled, bool drain) {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled) {
    agents_.erase(agent_id);
  } else {
    agents_[agent_id] = AgentAdminState{false, drain};
  }
}

void AgentAdminService::SetSlot(const std::string& agent_id, int slot_id, bool enabled) {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled) {
    disabled_slots_.erase({agent_id, slot_id});
  } else {
    disabled_slots_.insert({agent_id, slot_id});
  }
}

AgentAdminState AgentAdminService::Agent(const std::string& agent_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? AgentAdminState{} : it->second;
}

bool AgentAdminService::SlotEnabled(const std::string& agent_id, int slot_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return !disabled_slots_.contains({agent_id, slot_id});
}

}  // namespace det::master::server
