#include "master/server/agent_admin_service.h"

namespace det::master::server {

Status AgentAdminService::Load() {
  DET_ASSIGN_OR_RETURN(std::vector<store::AgentAdminRow> rows, store_->ListAgentAdminStates());
  std::lock_guard<std::mutex> lock(mu_);
  agents_.clear();
  disabled_slots_.clear();
  for (const store::AgentAdminRow& row : rows) {
    if (row.slot_id < 0) {
      agents_[row.agent_id] = AgentAdminState{false, row.draining};
    } else {
      disabled_slots_.insert({row.agent_id, static_cast<int>(row.slot_id)});
    }
  }
  return Status::Ok();
}

Status AgentAdminService::SetAgent(const std::string& agent_id, bool enabled, bool drain) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(store_->SetAgentAdminState(agent_id, -1, enabled, !enabled && drain));
  if (enabled) {
    agents_.erase(agent_id);
  } else {
    agents_[agent_id] = AgentAdminState{false, drain};
  }
  return Status::Ok();
}

Status AgentAdminService::SetSlot(const std::string& agent_id, int slot_id, bool enabled) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(store_->SetAgentAdminState(agent_id, slot_id, enabled, false));
  if (enabled) {
    disabled_slots_.erase({agent_id, slot_id});
  } else {
    disabled_slots_.insert({agent_id, slot_id});
  }
  return Status::Ok();
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

std::vector<std::string> AgentAdminService::KillingAgents() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, state] : agents_) {
    if (!state.enabled && !state.draining) out.push_back(id);
  }
  return out;
}

std::vector<std::pair<std::string, int>> AgentAdminService::DisabledSlots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {disabled_slots_.begin(), disabled_slots_.end()};
}

}  // namespace det::master::server
