#include "agent/detect/slots.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace det::agent {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

uint64_t Fnv1a64(const std::string& s, uint64_t seed) {
  uint64_t h = 14695981039346656037ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

Result<std::string> RunCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Internal("cannot run " + command);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int rc = pclose(pipe);
  if (rc != 0) return Internal(command + " failed with status " + std::to_string(rc));
  return out;
}

}  // namespace

nlohmann::json SlotToJson(const Slot& slot) {
  return {{"id", slot.id}, {"type", slot.type}, {"brand", slot.brand}, {"uuid", slot.uuid}};
}

Result<std::vector<Slot>> ParseNvidiaSmiCsv(const std::string& csv) {
  std::vector<Slot> slots;
  std::stringstream ss(csv);
  std::string line;
  while (std::getline(ss, line)) {
    line = Trim(line);
    if (line.empty()) continue;
    size_t first = line.find(',');
    size_t last = line.rfind(',');
    if (first == std::string::npos || first == last) {
      return InvalidArgument("nvidia-smi line has fewer than 3 fields: " + line);
    }
    std::string index = Trim(line.substr(0, first));
    Slot slot;
    try {
      size_t used = 0;
      slot.id = std::stoi(index, &used);
      if (used != index.size() || slot.id < 0) throw std::invalid_argument(index);
    } catch (const std::exception&) {
      return InvalidArgument("nvidia-smi line has a bad index: " + line);
    }
    slot.type = "cuda";
    slot.brand = Trim(line.substr(first + 1, last - first - 1));
    slot.uuid = Trim(line.substr(last + 1));
    if (slot.uuid.empty()) return InvalidArgument("nvidia-smi line has no uuid: " + line);
    slots.push_back(std::move(slot));
  }
  return slots;
}

std::vector<Slot> CpuSlots(const std::string& agent_id, int count, const std::string& brand) {
  std::vector<Slot> slots;
  for (int i = 0; i < count; ++i) {
    std::string key = agent_id + "/" + std::to_string(i);
    uint64_t a = Fnv1a64(key, 0);
    uint64_t b = Fnv1a64(key, 0x9e3779b97f4a7c15ull);
    char uuid[37];
    // Version-4-shaped (bits fixed), but derived deterministically from the agent id.
    std::snprintf(uuid, sizeof(uuid), "%08x-%04x-4%03x-%04x-%012llx",
                  static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                  static_cast<unsigned>(a & 0xfff),
                  static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                  static_cast<unsigned long long>(b & 0xffffffffffffull));
    slots.push_back(Slot{i, "cpu", brand, uuid});
  }
  return slots;
}

std::string CpuBrand() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string brand = Trim(line.substr(colon + 1));
        if (!brand.empty()) return brand;
      }
    }
  }
  return "cpu";
}

Result<std::vector<Slot>> DetectSlots(SlotType type, const std::string& agent_id, int cpu_slots) {
  if (type != SlotType::kCpu && OnPath("nvidia-smi")) {
    auto out =
        RunCommand("nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader 2>/dev/null");
    if (out.ok()) {
      auto gpus = ParseNvidiaSmiCsv(*out);
      if (gpus.ok() && !gpus->empty()) return gpus;
      if (!gpus.ok()) spdlog::warn("ignoring nvidia-smi output: {}", gpus.status().message());
    } else {
      spdlog::warn("{}", out.status().message());
    }
  }
  if (type == SlotType::kCuda) return FailedPrecondition("no cuda devices found by nvidia-smi");
  if (cpu_slots < 0) return InvalidArgument("slots must not be negative");
  return CpuSlots(agent_id, cpu_slots, CpuBrand());
}

}  // namespace det::agent
