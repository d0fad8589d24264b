#include "cli/job_render.h"

#include <cctype>
#include <cstdio>

#include "cli/format.h"

namespace det::cli {
namespace {

using json = nlohmann::json;
constexpr const char* kOmitted = "***";  // render.OMITTED_VALUE

}  // namespace

Result<bool> IsPriorityPool(const json& pools_response, const std::optional<std::string>& pool) {
  json pools = pools_response.value("resourcePools", json());
  if (!pools.is_array()) {
    return NotFound("No resource pools found checking scheduler type of " +
                    pool.value_or("None"));
  }
  for (const json& p : pools) {
    bool match = pool ? JsonString(p, "name") == *pool : p.value("defaultComputePool", false);
    if (match) return JsonString(p, "schedulerType") == "SCHEDULER_TYPE_PRIORITY";
  }
  return NotFound("Pool " + pool.value_or("None") + " not found");
}

json UnpackJobs(const json& wrapped_jobs) {
  json jobs = json::array();
  if (!wrapped_jobs.is_array()) return jobs;
  for (const json& w : wrapped_jobs) {
    if (!w.is_object()) continue;
    if (w.contains("full") && w["full"].is_object()) {
      jobs.push_back(w["full"]);
    } else if (w.contains("limited") && w["limited"].is_object()) {
      json j = w["limited"];
      j["limited"] = true;
      jobs.push_back(std::move(j));
    } else if (w.contains("jobId")) {
      jobs.push_back(w);  // already unwrapped (v1 shape)
    }
  }
  return jobs;
}

std::vector<std::string> JobListHeaders(bool is_priority) {
  return {"#",
          "ID",
          "Type",
          "Job Name",
          is_priority ? "Priority" : "Weight",
          "Submitted",
          "Slots (acquired/needed)",
          "State",
          "User"};
}

std::vector<TableRow> JobListRows(const json& jobs, bool is_priority) {
  std::vector<TableRow> rows;
  for (const json& j : jobs) {
    bool limited = j.value("limited", false);
    json summary = j.value("summary", json());
    std::string ahead = "N/A";
    std::string state = "N/A";
    if (summary.is_object()) {
      int64_t n = JsonInt(summary.value("jobsAhead", json(0))).value_or(0);
      if (n > -1) ahead = std::to_string(n);
      state = JsonString(summary, "state");
    }
    // Slurm pools: what Slurm says of the job (ids, states, pending reason).
    std::string detail = JsonString(j, "resourceManagerDetail");
    if (!detail.empty()) state += " [" + detail + "]";
    std::string type = JsonString(j, "type");
    std::string name = JsonString(j, "name");
    if (type == "TYPE_EXPERIMENT") {
      name += " (" + JsonCell(j.value("entityId", json(""))).value_or("None") + ")";
    }
    TableCell submitted = kOmitted;
    if (!limited) {
      std::string t = JsonString(j, "submissionTime");
      submitted = t.empty() ? TableCell() : TableCell(FormatPythonDatetime(t));
    }
    json sched = j.value(is_priority ? "priority" : "weight", json());
    rows.push_back({ahead, JsonString(j, "jobId"), type, limited ? kOmitted : name,
                    JsonCell(sched),
                    submitted,
                    JsonCell(j.value("allocatedSlots", json(0))).value_or("0") + "/" +
                        JsonCell(j.value("requestedSlots", json(0))).value_or("0"),
                    state, limited ? std::string(kOmitted) : JsonString(j, "username")});
  }
  return rows;
}

std::string FormatPythonDatetime(const std::string& text) {
  int y, mo, d, h, mi, s, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s,
                  &consumed) != 6) {
    return text;
  }
  std::string micros;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (micros.size() < 6) micros.push_back(text[pos]);
      ++pos;
    }
    while (micros.size() < 6) micros.push_back('0');
    if (micros == "000000") micros.clear();
  }
  // Only UTC ("Z" / "+00:00") is expected from the master; other offsets are kept as is.
  std::string rest = text.substr(pos);
  if (!rest.empty() && rest != "Z" && rest != "+00:00") {
    std::optional<int64_t> epoch = ParseRfc3339(text);
    if (!epoch) return text;
    std::optional<std::string> utc = FormatTimeText(text);  // `%Y-%m-%d %H:%M:%S+0000`
    if (!utc || utc->size() < 19) return text;
    return utc->substr(0, 19) + (micros.empty() ? "" : "." + micros) + "+00:00";
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, s);
  return std::string(buf) + (micros.empty() ? "" : "." + micros) + "+00:00";
}

}  // namespace det::cli
