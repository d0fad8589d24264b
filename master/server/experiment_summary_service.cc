#include "master/server/experiment_summary_service.h"

namespace det::master::server {

Result<std::map<int64_t, store::ExperimentSummaryRow>> ExperimentSummaryService::Summaries(
    const std::vector<ExperimentSummaryKey>& experiments) {
  std::map<int64_t, store::ExperimentSummaryRow> out;
  std::vector<int64_t> to_read;
  std::map<int64_t, std::optional<int64_t>> end_times;
  const int64_t now = clock_->NowMicros();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const ExperimentSummaryKey& k : experiments) {
      end_times[k.id] = k.end_time;
      auto it = cache_.find(k.id);
      if (k.end_time && it != cache_.end() && it->second.end_time == *k.end_time &&
          now - it->second.read_at < kMaxAgeMicros) {
        out[k.id] = it->second.row;
      } else {
        to_read.push_back(k.id);
      }
    }
  }
  if (to_read.empty()) return out;
  // Read without the lock: a slow page does not hold up another.
  DET_ASSIGN_OR_RETURN(std::vector<store::ExperimentSummaryRow> rows,
                       store_->ListExperimentSummaries(to_read));
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() > kMaxCached) cache_.clear();
  for (auto& r : rows) {
    const std::optional<int64_t>& end = end_times[r.experiment_id];
    if (end) {
      cache_[r.experiment_id] = Cached{*end, now, r};
    } else {
      cache_.erase(r.experiment_id);
    }
    out[r.experiment_id] = r;
  }
  return out;
}

}  // namespace det::master::server
