#include "master/api/validation_history.h"

#include <algorithm>

namespace det::master::api {

std::vector<ValidationPoint> ValidationHistory(std::vector<ValidationPoint> points,
                                               bool smaller_is_better) {
  std::stable_sort(points.begin(), points.end(),
                   [](const ValidationPoint& a, const ValidationPoint& b) {
                     if (a.report_time != b.report_time) return a.report_time < b.report_time;
                     return a.trial_id < b.trial_id;
                   });
  double sign = smaller_is_better ? 1.0 : -1.0;
  std::vector<ValidationPoint> out;
  std::optional<double> best;  // of sign * metric
  for (const ValidationPoint& p : points) {
    double v = sign * p.metric;
    if (!best || v < *best) out.push_back(p);
    if (!best || v < *best) best = v;
  }
  return out;
}

}  // namespace det::master::api
