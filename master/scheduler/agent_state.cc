#include "master/scheduler/agent_state.h"

#include <algorithm>

namespace det::master::scheduler {

AgentState::AgentState(const Agent& agent)
    : id_(agent.id),
      slot_ids_(agent.slot_ids),
      max_zero_(agent.max_zero_slot_containers),
      used_zero_(agent.used_zero_slot_containers),
      enabled_(agent.enabled),
      draining_(agent.draining) {
  std::sort(slot_ids_.begin(), slot_ids_.end());
  slot_ids_.erase(std::unique(slot_ids_.begin(), slot_ids_.end()), slot_ids_.end());
  for (int id : agent.used_slot_ids) {
    if (std::binary_search(slot_ids_.begin(), slot_ids_.end(), id)) used_.insert(id);
  }
}

int AgentState::NumSlots() const {
  if (draining_) return NumUsedSlots();
  if (!enabled_) return 0;
  return static_cast<int>(slot_ids_.size());
}

int AgentState::NumEmptySlots() const {
  if (draining_ || !enabled_) return 0;
  return NumSlots() - NumUsedSlots();
}

int AgentState::NumZeroSlots() const {
  if (draining_) return used_zero_;
  if (!enabled_) return 0;
  return max_zero_;
}

int AgentState::NumEmptyZeroSlots() const {
  if (draining_ || !enabled_) return 0;
  return NumZeroSlots() - used_zero_;
}

std::vector<int> AgentState::Allocate(int slots) {
  std::vector<int> out;
  if (slots == 0) {
    ++used_zero_;
    return out;
  }
  for (int id : slot_ids_) {
    if (static_cast<int>(out.size()) == slots) break;
    if (!used_.count(id)) out.push_back(id);
  }
  for (int id : out) used_.insert(id);
  return out;
}

void AgentState::MarkUsed(const std::vector<int>& slot_ids) {
  if (slot_ids.empty()) {
    ++used_zero_;
    return;
  }
  for (int id : slot_ids) {
    if (std::binary_search(slot_ids_.begin(), slot_ids_.end(), id)) used_.insert(id);
  }
}

void AgentState::Release(const std::vector<int>& slot_ids) {
  if (slot_ids.empty()) {
    if (used_zero_ > 0) --used_zero_;
    return;
  }
  for (int id : slot_ids) used_.erase(id);
}

std::vector<AgentState> BuildAgentStates(const std::vector<const Agent*>& agents,
                                         const std::vector<const AllocationRequest*>& requests) {
  std::vector<AgentState> out;
  for (const Agent* a : agents) out.emplace_back(*a);
  std::sort(out.begin(), out.end(),
            [](const AgentState& x, const AgentState& y) { return x.id() < y.id(); });
  for (const AllocationRequest* r : requests) {
    if (!r->allocated) continue;
    for (const AgentSlots& part : *r->allocated) {
      for (AgentState& a : out) {
        if (a.id() == part.agent_id) a.MarkUsed(part.slot_ids);
      }
    }
  }
  return out;
}

AgentState AgentState::Emptied() const {
  AgentState out = *this;
  out.used_.clear();
  out.used_zero_ = 0;
  return out;
}

}  // namespace det::master::scheduler
