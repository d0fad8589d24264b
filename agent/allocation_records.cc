#include "agent/allocation_records.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace det::agent {
namespace {

namespace fs = std::filesystem;

constexpr char kSuffix[] = ".json";
constexpr size_t kSuffixLen = sizeof(kSuffix) - 1;

}  // namespace

bool IsValidAllocationId(const std::string& allocation_id) {
  return !allocation_id.empty() && allocation_id != "." && allocation_id != ".." &&
         allocation_id.find('/') == std::string::npos &&
         allocation_id.find('\0') == std::string::npos;
}

std::string AllocationWorkDir(const std::string& data_dir, const std::string& allocation_id) {
  return (fs::path(data_dir) / "work" / allocation_id).string();
}

AllocationRecords::AllocationRecords(std::string data_dir)
    : dir_((fs::path(std::move(data_dir)) / "allocations").string()) {}

std::string AllocationRecords::PathOf(const std::string& allocation_id) const {
  return (fs::path(dir_) / (allocation_id + kSuffix)).string();
}

Status AllocationRecords::Write(const AllocationRecord& record) const {
  if (!IsValidAllocationId(record.allocation_id)) {
    return InvalidArgument("allocation record: bad allocation id \"" + record.allocation_id + "\"");
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Internal("create " + dir_ + ": " + ec.message());
  nlohmann::json j = {
      {"allocationId", record.allocation_id}, {"workdir", record.workdir}, {"pid", record.pid}};
  std::string path = PathOf(record.allocation_id);
  std::string tmp = path + ".tmp";  // never ends in ".json", so List() skips it
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    out.flush();
    if (!out) return Internal("write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) return Internal("rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

Status AllocationRecords::Remove(const std::string& allocation_id) const {
  if (!IsValidAllocationId(allocation_id)) {
    return InvalidArgument("allocation record: bad allocation id \"" + allocation_id + "\"");
  }
  std::error_code ec;
  fs::remove(PathOf(allocation_id), ec);
  if (ec) return Internal("remove " + PathOf(allocation_id) + ": " + ec.message());
  return Status::Ok();
}

Result<std::vector<AllocationRecord>> AllocationRecords::List() const {
  std::vector<AllocationRecord> out;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return out;
  fs::directory_iterator it(dir_, ec);
  if (ec) return Internal("list " + dir_ + ": " + ec.message());
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return Internal("list " + dir_ + ": " + ec.message());
    std::string name = it->path().filename().string();
    if (name.size() <= kSuffixLen || name.compare(name.size() - kSuffixLen, kSuffixLen, kSuffix))
      continue;
    AllocationRecord record;
    record.allocation_id = name.substr(0, name.size() - kSuffixLen);
    if (!IsValidAllocationId(record.allocation_id)) continue;
    std::ifstream in(it->path());
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_object()) {
      if (j.contains("workdir") && j["workdir"].is_string()) {
        record.workdir = j["workdir"].get<std::string>();
      }
      if (j.contains("pid") && j["pid"].is_number_integer()) record.pid = j["pid"].get<int>();
    }
    out.push_back(std::move(record));
  }
  std::sort(out.begin(), out.end(), [](const AllocationRecord& a, const AllocationRecord& b) {
    return a.allocation_id < b.allocation_id;
  });
  return out;
}

}  // namespace det::agent
