#pragma once
// Slot detection: GPUs via nvidia-smi when present, otherwise N CPU slots.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::agent {

struct Slot {
  int id = 0;
  std::string type;  // "cpu" | "cuda"
  std::string brand;
  std::string uuid;
};

nlohmann::json SlotToJson(const Slot& slot);

// Parses `nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader` output; blank lines are
// skipped, any other malformed line is an error.
Result<std::vector<Slot>> ParseNvidiaSmiCsv(const std::string& csv);

// `count` CPU slots whose uuids are derived from `agent_id` only (stable across restarts).
std::vector<Slot> CpuSlots(const std::string& agent_id, int count, const std::string& brand);

// The CPU model from /proc/cpuinfo, or "cpu".
std::string CpuBrand();

enum class SlotType { kAuto, kCpu, kCuda };

// kAuto: GPUs when nvidia-smi is on PATH and lists any, else CPU slots; kCpu: CPU slots;
// kCuda: GPUs or an error.
Result<std::vector<Slot>> DetectSlots(SlotType type, const std::string& agent_id, int cpu_slots);

}  // namespace det::agent
