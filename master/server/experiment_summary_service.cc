#include "master/server/experiment_summary_service.h"

namespace det::master::server {

Result<std::map<int64_t, store::ExperimentSummaryRow>> ExperimentSummaryService::Summaries(
    const std::vector<int64_t>& experiment_ids) {
  DET_ASSIGN_OR_RETURN(std::vector<store::ExperimentSummaryRow> rows,
                       store_->ListExperimentSummaries(experiment_ids));
  std::map<int64_t, store::ExperimentSummaryRow> out;
  for (auto& r : rows) out[r.experiment_id] = r;
  return out;
}

}  // namespace det::master::server
