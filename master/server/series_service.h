#pragma once
// SeriesService: what charts and large lists read. A trial's metric series downsampled on the
// server (GET /api/v1/trials/time-series and /trials/{id}/summarize, master/api/routes_series.cc)
// and pages of an experiment's trials, both answered by the store with work bounded by what is
// returned, not by the length of the series or the size of the experiment. Stateless: the store
// is thread-safe, so it holds no lock.

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

struct SeriesQuery {
  // The metric names to read in each group (training, validation or a generic group).
  std::map<std::string, std::vector<std::string>> names_by_group;
  int64_t max_points = 200;  // per group, at least 1
  int64_t start_batches = 0;
  int64_t end_batches = std::numeric_limits<int64_t>::max();
};

// One point: Determined's DataPoint.
struct SeriesPoint {
  int64_t batches = 0;
  int64_t time = 0;             // micros
  nlohmann::json values;        // {name: value or null}, one entry per requested name
  std::optional<double> epoch;  // the report's "epochs" (or legacy "epoch") metric
};

// Determined's DownsampledMetrics: the points of one group.
struct GroupSeries {
  std::string group;
  std::vector<SeriesPoint> points;
};

class SeriesService {
 public:
  // The most points one group of one trial may ask for.
  static constexpr int64_t kMaxPoints = 100000;

  explicit SeriesService(store::Store* store) : store_(store) {}

  // The downsampled series of one trial (master/core/downsample.h): one entry per group of the
  // query that has points, by group name; `trial` (when given) receives the trial's row.
  // NotFound when the trial does not exist; InvalidArgument for a point count outside
  // [1, kMaxPoints] or an empty or reversed range.
  Result<std::vector<GroupSeries>> TrialSeries(int64_t trial_id, const SeriesQuery& query,
                                               store::TrialRow* trial = nullptr);

  // One page of an experiment's trial ids by id; `total` counts them all. NotFound when the
  // experiment does not exist.
  Result<std::vector<int64_t>> TrialIdsPage(int64_t experiment_id, const store::Page& page,
                                            bool descending, int64_t* total);

 private:
  store::Store* store_;
};

}  // namespace det::master::server
