#pragma once
// Validation history of an experiment (GET /api/v1/experiments/{id}/validation-history): the
// validations that improved on the best searcher metric reported before them, in report order,
// as Determined computes it. Pure.

#include <cstdint>
#include <optional>
#include <vector>

namespace det::master::api {

struct ValidationPoint {
  int64_t trial_id = 0;
  int64_t report_time = 0;  // micros
  double metric = 0;
};

// `points` in any order; returns the improving ones by report time (ties: by trial id). A value
// equal to the best so far is not an improvement.
std::vector<ValidationPoint> ValidationHistory(std::vector<ValidationPoint> points,
                                               bool smaller_is_better);

}  // namespace det::master::api
