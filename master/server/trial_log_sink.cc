#include "master/server/trial_log_sink.h"

#include <spdlog/spdlog.h>

namespace det::master::server {

store::TaskLogRow TrialLogSink::Row(int64_t trial_id, const std::string& task_id,
                                    const std::string& message) const {
  return RowAt(clock_->NowMicros(), trial_id, task_id, message);
}

store::TaskLogRow TrialLogSink::RowAt(int64_t micros, int64_t trial_id, const std::string& task_id,
                                      const std::string& message) {
  store::TaskLogRow r;
  r.trial_id = trial_id;
  r.task_id = task_id;
  r.timestamp = micros;
  r.level = "LOG_LEVEL_INFO";
  r.stdtype = "stdout";
  r.source = "master";
  r.log = message + "\n";
  return r;
}

void TrialLogSink::Append(int64_t trial_id, const std::string& task_id,
                          const std::string& message) {
  Status st = store_->AddTaskLogs({Row(trial_id, task_id, message)});
  if (!st.ok()) spdlog::warn("cannot store master log line: {}", st.ToString());
  Notify(trial_id);
}

void TrialLogSink::Notify(int64_t trial_id) { waiters_->Notify(TrialLogsKey(trial_id)); }

std::string TrialKey(int64_t trial_id) { return "trial:" + std::to_string(trial_id); }
std::string TrialLogsKey(int64_t trial_id) { return "logs:" + std::to_string(trial_id); }
std::string AllocationKey(const std::string& allocation_id) { return "alloc:" + allocation_id; }

}  // namespace det::master::server
