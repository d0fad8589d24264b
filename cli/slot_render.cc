#include "cli/slot_render.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "cli/format.h"

namespace det::cli {

using nlohmann::json;

namespace {

const char kNoPermissions[] = "NO PERMISSIONS";

// The last path segment of an id (Determined's local_id: agents and slots may be addressed as
// paths).
std::string LocalId(const std::string& id) {
  size_t slash = id.find_last_of('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

const json& Field(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

bool Flag(const json& obj, const char* key, bool fallback) {
  const json& v = Field(obj, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

std::string DeviceType(const json& device) {
  const std::string t = JsonString(device, "type");
  if (t == "TYPE_CUDA") return "cuda";
  if (t == "TYPE_ROCM") return "rocm";
  if (t == "TYPE_CPU") return "cpu";
  return "unknown";
}

bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// Slot ids "0".."N" in numeric order (the JSON object's keys come sorted as text: "10" < "2").
bool SlotIdLess(const std::string& a, const std::string& b) {
  if (AllDigits(a) && AllDigits(b) && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

struct Holder {
  std::string name;
  std::string allocation_id;
};

// Container id -> the allocation whose resources run in it.
std::map<std::string, Holder> ContainerHolders(const json& tasks_response) {
  std::map<std::string, Holder> out;
  const json& allocations = Field(tasks_response, "allocationIdToSummary");
  if (!allocations.is_object()) return out;
  for (const json& a : allocations) {
    const json& resources = Field(a, "resources");
    if (!resources.is_array()) continue;
    for (const json& r : resources) {
      std::string container = JsonString(r, "containerId");
      if (!container.empty()) {
        out[container] = {JsonString(a, "name"), JsonString(a, "allocationId")};
      }
    }
  }
  return out;
}

std::string TaskName(const std::map<std::string, Holder>& holders, const json& container) {
  if (!container.is_object()) return "FREE";
  if (Flag(container, "permissionDenied", false)) return kNoPermissions;
  const std::string id = JsonString(container, "id");
  if (auto it = holders.find(id); it != holders.end()) return it->second.name;
  if (id.find("determined-master-deployment") != std::string::npos ||
      id.find("determined-db-deployment") != std::string::npos) {
    return "Determined System Task: " + id;
  }
  if (id.find("dispatcherrm-inuse-slot-placeholder") != std::string::npos) return "";
  return "Non-Determined Task: " + id;
}

}  // namespace

std::vector<SlotListRow> SlotListRows(const json& agents_response, const json& tasks_response) {
  const std::map<std::string, Holder> holders = ContainerHolders(tasks_response);
  std::vector<const json*> agents;
  const json& list = Field(agents_response, "agents");
  if (list.is_array()) {
    for (const json& a : list) {
      if (a.is_object()) agents.push_back(&a);
    }
  }
  std::stable_sort(agents.begin(), agents.end(), [](const json* a, const json* b) {
    return JsonString(*a, "id") < JsonString(*b, "id");
  });
  std::vector<SlotListRow> out;
  for (const json* agent : agents) {
    std::string pools;
    const json& pool_list = Field(*agent, "resourcePools");
    if (pool_list.is_array()) {
      for (const json& p : pool_list) {
        if (!pools.empty()) pools += ", ";
        pools += p.is_string() ? p.get<std::string>() : p.dump();
      }
    }
    const json& slots = Field(*agent, "slots");
    if (!slots.is_object()) continue;
    std::vector<std::pair<std::string, const json*>> ordered;
    for (auto it = slots.begin(); it != slots.end(); ++it) {
      if (it.value().is_object()) ordered.emplace_back(it.key(), &it.value());
    }
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return SlotIdLess(a.first, b.first); });
    for (const auto& [key, slot] : ordered) {
      SlotListRow row;
      row.agent_id = LocalId(JsonString(*agent, "id"));
      row.resource_pools = pools;
      std::string slot_id = JsonString(*slot, "id");
      row.slot_id = LocalId(slot_id.empty() ? key : slot_id);
      row.enabled = Flag(*slot, "enabled", true);
      row.draining = Flag(*slot, "draining", false);
      const json& container = Field(*slot, "container");
      const bool held = container.is_object();
      auto holder = held ? holders.find(JsonString(container, "id")) : holders.end();
      row.allocation_id = holder != holders.end() ? holder->second.allocation_id
                          : held                  ? "OCCUPIED"
                                                  : "FREE";
      row.task_name = TaskName(holders, container);
      const json& device = Field(*slot, "device");
      row.type = DeviceType(device);
      row.device = JsonString(device, "brand");
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::vector<std::string> SlotListHeaders() {
  return {"Agent ID",      "Resource Pool", "Slot ID", "Enabled", "Draining",
          "Allocation ID", "Task Name",     "Type",    "Device"};
}

std::vector<TableRow> SlotListTable(const std::vector<SlotListRow>& rows) {
  std::vector<TableRow> out;
  for (const SlotListRow& r : rows) {
    out.push_back({r.agent_id, r.resource_pools, r.slot_id, r.enabled ? "True" : "False",
                   r.draining ? "True" : "False", r.allocation_id, r.task_name, r.type, r.device});
  }
  return out;
}

json SlotListJson(const std::vector<SlotListRow>& rows) {
  json out = json::array();
  for (const SlotListRow& r : rows) {
    out.push_back({{"agent_id", r.agent_id},
                   {"resource_pools", r.resource_pools},
                   {"slot_id", r.slot_id},
                   {"enabled", r.enabled},
                   {"draining", r.draining},
                   {"allocation_id", r.allocation_id},
                   {"task_name", r.task_name},
                   {"type", r.type},
                   {"device", r.device}});
  }
  return out;
}

}  // namespace det::cli
