#include "master/core/downsample.h"

#include <algorithm>

namespace det::master::core {

std::vector<int64_t> DownsampleTargets(int64_t first, int64_t last, int64_t max_points) {
  std::vector<int64_t> out;
  if (max_points <= 0 || last < first) return out;
  if (max_points == 1 || first == last) return {first};
  // Spread in 128-bit arithmetic: (last - first) * k can overflow 64 bits near the extremes.
  const __int128 span = static_cast<__int128>(last) - first;
  const int64_t n = max_points;
  out.reserve(static_cast<size_t>(std::min<__int128>(n, span + 1)));
  for (int64_t k = 0; k < n; ++k) {
    int64_t t = static_cast<int64_t>(first + span * k / (n - 1));
    if (out.empty() || t > out.back()) out.push_back(t);
  }
  return out;
}

std::vector<size_t> DownsampleIndices(const std::vector<int64_t>& steps, int64_t max_points) {
  std::vector<size_t> out;
  if (steps.empty() || max_points <= 0) return out;
  if (static_cast<int64_t>(steps.size()) <= max_points) {
    out.resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) out[i] = i;
    return out;
  }
  for (int64_t t : DownsampleTargets(steps.front(), steps.back(), max_points)) {
    size_t i = static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), t) - steps.begin());
    if (out.empty() || i > out.back()) out.push_back(i);
  }
  return out;
}

}  // namespace det::master::core
