#pragma once
// `det slot list`: one row per slot of every agent, with the allocation and task holding it, as
// Determined's `cli/agent.py` (list_slots) renders them from GET /api/v1/agents and
// GET /api/v1/tasks.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/table.h"

namespace det::cli {

struct SlotListRow {
  std::string agent_id;
  std::string resource_pools;  // the agent's pools joined with ", "
  std::string slot_id;
  bool enabled = true;
  bool draining = false;
  std::string allocation_id;  // "FREE" without a container, "OCCUPIED" for one no task holds
  std::string task_name;      // "FREE", the task's name, or who else holds the slot
  std::string type;           // cuda | rocm | cpu | unknown
  std::string device;         // the device's brand
};

// The rows of a `GET /api/v1/agents` answer, agents by id and each agent's slots by id (numeric
// ids in numeric order), with the allocations of a `GET /api/v1/tasks` answer
// (`allocationIdToSummary`) naming the tasks whose containers hold slots. Missing or
// mistyped fields read as absent.
std::vector<SlotListRow> SlotListRows(const nlohmann::json& agents_response,
                                      const nlohmann::json& tasks_response);

// `Agent ID, Resource Pool, Slot ID, Enabled, Draining, Allocation ID, Task Name, Type, Device`.
std::vector<std::string> SlotListHeaders();
std::vector<TableRow> SlotListTable(const std::vector<SlotListRow>& rows);

// `--json`: a list of objects keyed agent_id, resource_pools, slot_id, enabled, draining,
// allocation_id, task_name, type, device (Determined's keys).
nlohmann::json SlotListJson(const std::vector<SlotListRow>& rows);

}  // namespace det::cli
