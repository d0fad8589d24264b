#include "master/scheduler/fitting.h"

#include <algorithm>
#include <map>

#include "master/scheduler/md5.h"

namespace det::master::scheduler {
namespace {

struct Candidate {
  size_t index;
  double score;
  uint64_t hash;
  const std::string* id;
};

bool CandidateLess(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.hash != b.hash) return a.hash < b.hash;
  return *a.id < *b.id;
}

bool Blocked(const AllocationRequest& request, const AgentState& agent) {
  return std::find(request.blocked_agents.begin(), request.blocked_agents.end(), agent.id()) !=
         request.blocked_agents.end();
}

Candidate MakeCandidate(const AllocationRequest& request, const std::vector<AgentState>& agents,
                        size_t i, FittingPolicy policy) {
  const AgentState& a = agents[i];
  double score = policy == FittingPolicy::kBest ? BestFit(request, a) : WorstFit(request, a);
  return Candidate{i, score, HashDistance(request.id, a.id()), &a.id()};
}

}  // namespace

double BestFit(const AllocationRequest& request, const AgentState& agent) {
  if (agent.NumUsedSlots() != 0 || request.slots != 0) {
    return 1.0 / (1.0 + agent.NumEmptySlots());
  }
  if (agent.NumZeroSlots() == 0) return 0.0;
  return 1.0 / (1.0 + agent.NumEmptyZeroSlots());
}

double WorstFit(const AllocationRequest& request, const AgentState& agent) {
  if (agent.NumUsedSlots() != 0 || request.slots != 0) {
    if (agent.NumSlots() == 0) return 0.0;  // Go divides 0/0 here (NaN); we score it lowest
    return static_cast<double>(agent.NumEmptySlots()) / agent.NumSlots();
  }
  if (agent.NumZeroSlots() == 0) return 0.0;
  return static_cast<double>(agent.NumEmptyZeroSlots()) / agent.NumZeroSlots();
}

uint64_t HashDistance(std::string_view allocation_id, std::string_view agent_id) {
  return Md5Prefix64(allocation_id) - Md5Prefix64(agent_id);
}

std::vector<Fit> FindFits(const AllocationRequest& request, const std::vector<AgentState>& agents,
                          FittingPolicy policy, bool allow_heterogeneous_fits) {
  // Rule 4: shared fit.
  std::vector<Candidate> shared;
  for (size_t i = 0; i < agents.size(); ++i) {
    const AgentState& a = agents[i];
    if (Blocked(request, a) || a.NumEmptySlots() < request.slots) continue;
    if (request.slots == 0 && a.NumEmptyZeroSlots() <= 0) continue;
    shared.push_back(MakeCandidate(request, agents, i, policy));
  }
  if (!shared.empty()) {
    std::sort(shared.begin(), shared.end(), CandidateLess);
    return {Fit{shared[0].index, request.slots}};
  }
  // Rule 5.
  if (request.single_node || request.slots <= 1) return {};
  // Rule 6: idle agents grouped by free slots, largest size first.
  std::map<int, std::vector<Candidate>, std::greater<int>> by_size;
  for (size_t i = 0; i < agents.size(); ++i) {
    const AgentState& a = agents[i];
    if (a.NumUsedSlots() != 0 || Blocked(request, a)) continue;
    int n = a.NumEmptySlots();
    if (n == 0) continue;
    by_size[n].push_back(MakeCandidate(request, agents, i, policy));
  }
  for (auto& [size, group] : by_size) std::sort(group.begin(), group.end(), CandidateLess);
  for (const auto& [size, group] : by_size) {
    if (static_cast<int64_t>(group.size()) * size < request.slots) continue;
    if (request.slots % size != 0) continue;
    std::vector<Fit> fits;
    for (int k = 0; k < request.slots / size; ++k) fits.push_back(Fit{group[k].index, size});
    return fits;
  }
  // Rule 7.
  if (allow_heterogeneous_fits) {
    std::vector<Fit> fits;
    int needed = request.slots;
    for (const auto& [size, group] : by_size) {
      int take = std::min(needed / size, static_cast<int>(group.size()));
      if (take == 0) continue;
      for (int k = 0; k < take; ++k) fits.push_back(Fit{group[k].index, size});
      needed -= take * size;
      if (needed == 0) return fits;
    }
  }
  return {};
}

std::vector<AgentSlots> ApplyFits(const std::vector<Fit>& fits, std::vector<AgentState>* agents) {
  std::vector<AgentSlots> out;
  for (const Fit& f : fits) {
    AgentState& a = (*agents)[f.agent_index];
    out.push_back(AgentSlots{a.id(), a.Allocate(f.slots)});
  }
  return out;
}

void RemoveFromAgents(const std::vector<AgentSlots>& allocated, std::vector<AgentState>* agents) {
  for (const AgentSlots& part : allocated) {
    for (AgentState& a : *agents) {
      if (a.id() == part.agent_id) a.Release(part.slot_ids);
    }
  }
}

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
