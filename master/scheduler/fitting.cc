#include "master/scheduler/fitting.h"

#include <algorithm>

namespace det::master::scheduler {

std::vector<Placement> PlaceFifo(const std::vector<SlotRequest>& requests,
                                 std::vector<AgentCapacity> agents) {
  for (auto& a : agents) std::sort(a.free_slot_ids.begin(), a.free_slot_ids.end());
  std::sort(agents.begin(), agents.end(),
            [](const AgentCapacity& x, const AgentCapacity& y) { return x.agent_id < y.agent_id; });
  std::vector<Placement> out;
  for (const SlotRequest& r : requests) {
    AgentCapacity* best = nullptr;
    for (auto& a : agents) {
      int64_t free = static_cast<int64_t>(a.free_slot_ids.size());
      if (free < r.slots) continue;
      if (best == nullptr) {
        best = &a;
        continue;
      }
      int64_t best_free = static_cast<int64_t>(best->free_slot_ids.size());
      bool better = r.slots == 0 ? free > best_free : free < best_free;
      if (better) best = &a;
    }
    if (best == nullptr) continue;
    Placement p{r.request_id, best->agent_id, {}};
    p.slot_ids.assign(best->free_slot_ids.begin(), best->free_slot_ids.begin() + r.slots);
    best->free_slot_ids.erase(best->free_slot_ids.begin(), best->free_slot_ids.begin() + r.slots);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace det::master::scheduler
