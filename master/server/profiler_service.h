#pragma once
// ProfilerService: the system metrics a trial's profiler reports (core_context.profiler.on(),
// Trainer profiling). Reports arrive as trial metrics of the groups cpu, gpu, memory, disk and
// network; they are stored apart from training metrics and read back as series
// (GET /api/v1/trials/{id}/profiler/available_series and .../profiler/metrics). Thread-safe:
// the store is; the mutex guards only the report counter that wakes followers.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "master/core/system_metrics.h"
#include "master/store/store.h"

namespace det::master::server {

struct Principal;

// One point of a series (Determined's TrialProfilerMetricsBatch holds one point per batch).
struct SystemMetricPoint {
  core::SystemSeries series;
  double value = 0;
  int64_t time = 0;  // micros
};

struct SystemMetricPage {
  std::vector<SystemMetricPoint> points;
  int64_t last_row = 0;  // cursor for the next page: the last stored report read
};

class ProfilerService {
 public:
  ProfilerService(store::Store* store, const Clock* clock);

  // Stores one report of `group` ({agent_id: {...}}) for the trial's run `run_id`; an
  // allocation may report only for its own trial. `report_time` (micros) defaults to now.
  Status Report(const Principal& who, int64_t trial_id, int64_t run_id, const std::string& group,
                const nlohmann::json& metrics, std::optional<int64_t> report_time);

  // Every series the trial has reported, by group, agent and name.
  Result<std::vector<core::SystemSeries>> AvailableSeries(int64_t trial_id);

  // Points of series `name` of reports after `after_row`, oldest first, from at most `limit`
  // reports; `agent_id` / `gpu_uuid` "" = every agent / GPU. Unknown names have no points.
  Result<SystemMetricPage> Points(int64_t trial_id, const std::string& name,
                                  const std::string& agent_id, const std::string& gpu_uuid,
                                  int64_t after_row, int64_t limit);

  // NotFound when the trial does not exist.
  Status CheckTrial(int64_t trial_id);

  // Returns once any report arrives after `seen` (a value of reports()) or `timeout_ms` passes.
  void WaitForReport(uint64_t seen, int64_t timeout_ms);
  uint64_t reports();

 private:
  store::Store* store_;
  const Clock* clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t reports_ = 0;
};

}  // namespace det::master::server
