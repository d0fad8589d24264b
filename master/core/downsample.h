#pragma once
// Downsampling a metric series for a chart. Pure: no I/O.
//
// The rule: keep the first and the last point of the range and spread the others evenly over
// the steps (batches) axis: for each of `max_points` evenly spaced targets from the first step to
// the last, the first point at or after it. It needs no pass over the whole series, so the store
// answers it with one index seek per target (SqliteStore::SampleMetrics) whatever the length.
//
// Determined 0.38 (CompareTrials) samples `maxDatapoints` rows at random (seeded), which reads
// the whole series, drops the first and last points as often as any other, and draws a curve
// that shifts when a point is added. Earlier releases used LTTB, which needs every point in
// memory. Evenly spaced steps keep the shape of a learning curve (reports are evenly spaced in
// steps) at the cost of LTTB's spike preservation.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace det::master::core {

// Up to `max_points` strictly increasing steps from `first` to `last` (both included when
// max_points >= 2; only `first` when max_points == 1), evenly spaced and rounded down. Fewer
// when the range holds fewer distinct steps. Empty when max_points <= 0 or last < first.
std::vector<int64_t> DownsampleTargets(int64_t first, int64_t last, int64_t max_points);

// The same rule over a series already in memory: `steps` ascending (repeats allowed); returns
// the ascending, distinct indices of the points kept: every index when the series has at most
// `max_points` points, else for each target the first point at or after it.
std::vector<size_t> DownsampleIndices(const std::vector<int64_t>& steps, int64_t max_points);

}  // namespace det::master::core
