#include "master/server/profiler_service.h"

#include <chrono>

#include "master/server/master.h"

namespace det::master::server {

ProfilerService::ProfilerService(store::Store* store, const Clock* clock)
    : store_(store), clock_(clock) {}

Status ProfilerService::CheckTrial(int64_t trial_id) { return store_->GetTrial(trial_id).status(); }

Status ProfilerService::Report(const Principal& who, int64_t trial_id, int64_t run_id,
                               const std::string& group, const nlohmann::json& metrics,
                               std::optional<int64_t> report_time) {
  if (who.is_allocation && who.trial_id != trial_id) {
    return PermissionDenied("allocation " + who.allocation_id + " may not act on trial " +
                            std::to_string(trial_id));
  }
  DET_ASSIGN_OR_RETURN(auto agents, core::SplitSystemMetricsReport(group, metrics));
  DET_ASSIGN_OR_RETURN(store::TrialRow trial, store_->GetTrial(trial_id));
  if (run_id != trial.run_id) {
    return InvalidArgument("invalid run id " + std::to_string(run_id) + " for trial " +
                           std::to_string(trial_id) + " (current run is " +
                           std::to_string(trial.run_id) + ")");
  }
  std::vector<store::SystemMetricRow> rows;
  for (auto& [agent, values] : agents) {
    store::SystemMetricRow r;
    r.trial_id = trial_id;
    r.trial_run_id = run_id;
    r.group = group;
    r.agent_id = agent;
    r.metrics = std::move(values);
    r.end_time = report_time.value_or(clock_->NowMicros());
    rows.push_back(std::move(r));
  }
  DET_RETURN_IF_ERROR(store_->AddSystemMetrics(rows));
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++reports_;
  }
  cv_.notify_all();
  return Status::Ok();
}

Result<std::vector<core::SystemSeries>> ProfilerService::AvailableSeries(int64_t trial_id) {
  DET_RETURN_IF_ERROR(CheckTrial(trial_id));
  // Every report holds all of its group's metrics, so the latest of each agent names them all.
  DET_ASSIGN_OR_RETURN(auto latest, store_->LatestSystemMetrics(trial_id));
  std::vector<core::SystemSeries> out;
  for (const auto& row : latest) {
    for (auto& s : core::SeriesOfReport(row.group, row.agent_id, row.metrics)) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

Result<SystemMetricPage> ProfilerService::Points(int64_t trial_id, const std::string& name,
                                                 const std::string& agent_id,
                                                 const std::string& gpu_uuid, int64_t after_row,
                                                 int64_t limit) {
  SystemMetricPage page;
  page.last_row = after_row;
  std::string group = core::SystemMetricGroupOfSeries(name);
  if (group.empty()) return page;
  DET_ASSIGN_OR_RETURN(auto rows,
                       store_->ListSystemMetrics(trial_id, group, agent_id, after_row, limit));
  for (const auto& row : rows) {
    page.last_row = row.id;
    // GPU uuids label GPU metrics only; other labels (disk paths) are not series here.
    for (const auto& [label, value] :
         core::ValuesOfSeries(row.metrics, name, group == "gpu" ? gpu_uuid : std::string())) {
      if (group != "gpu" && !label.empty()) continue;
      page.points.push_back({{name, row.agent_id, label}, value, row.end_time});
    }
  }
  return page;
}

uint64_t ProfilerService::reports() {
  std::lock_guard<std::mutex> lock(mu_);
  return reports_;
}

void ProfilerService::WaitForReport(uint64_t seen, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return reports_ != seen; });
}

}  // namespace det::master::server
