#include "master/searcher/bracket_math.h"

#include <algorithm>
#include <cmath>

namespace det::master::searcher {

std::vector<uint64_t> MakeRungUnits(int num_rungs, double max_length, double divisor) {
  std::vector<uint64_t> units;
  units.reserve(static_cast<size_t>(std::max(num_rungs, 0)));
  for (int k = 0; k < num_rungs; ++k) {
    double rate = std::pow(divisor, static_cast<double>(num_rungs - 1 - k));
    double v = max_length / rate;
    uint64_t u = v >= 1 ? static_cast<uint64_t>(v) : 0;
    units.push_back(std::max<uint64_t>(u, 1));
  }
  return units;
}

int LogRungLimit(double x, double divisor) {
  if (!(x >= 1) || !(divisor > 1)) return 1;
  int k = static_cast<int>(std::log(x) / std::log(divisor));
  k = std::clamp(k, 0, 1000);
  while (k < 1000 && std::pow(divisor, k + 1) <= x) ++k;
  while (k > 0 && std::pow(divisor, k) > x) --k;
  return k + 1;
}

int AshaMaxRungs(int max_rungs, double max_length, int64_t max_trials, double divisor) {
  int mr = std::min({max_rungs, LogRungLimit(max_length, divisor),
                     LogRungLimit(static_cast<double>(max_trials), divisor)});
  return std::max(mr, 1);
}

Result<std::vector<int>> ModeRungCounts(const std::string& mode, int max_rungs) {
  std::vector<int> out;
  int first;
  if (mode == "aggressive") {
    first = max_rungs;
  } else if (mode == "standard") {
    first = (max_rungs - 1) / 2 + 1;
  } else if (mode == "conservative") {
    first = 1;
  } else {
    return InvalidArgument("searcher.mode: must be one of aggressive, standard, conservative, "
                           "got '" + mode + "'");
  }
  for (int r = first; r <= max_rungs; ++r) out.push_back(r);
  return out;
}

std::vector<int64_t> BracketMaxTrials(int64_t max_trials, double divisor,
                                      const std::vector<int>& rungs) {
  std::vector<double> weights;
  double total = 0;
  for (int r : rungs) {
    double w = std::pow(divisor, static_cast<double>(r - 1)) / static_cast<double>(r);
    weights.push_back(w);
    total += w;
  }
  std::vector<int64_t> out;
  int64_t sum = 0;
  for (double w : weights) {
    int64_t n = std::max<int64_t>(
        static_cast<int64_t>(w / total * static_cast<double>(max_trials)), 1);
    out.push_back(n);
    sum += n;
  }
  if (!out.empty()) out[0] += std::max<int64_t>(max_trials - sum, 0);
  return out;
}

std::vector<int64_t> CapBracketTrials(std::vector<int64_t> trials, int64_t max_trials) {
  int64_t left = max_trials;
  std::vector<int64_t> out;
  for (int64_t n : trials) {
    int64_t take = std::min(n, left);
    if (take <= 0) break;
    out.push_back(take);
    left -= take;
  }
  return out;
}

std::vector<int64_t> BracketMaxConcurrentTrials(int64_t max_concurrent_trials, double divisor,
                                                const std::vector<int64_t>& max_trials) {
  std::vector<int64_t> out;
  if (max_trials.empty()) return out;
  auto brackets = static_cast<int64_t>(max_trials.size());
  if (max_concurrent_trials == 0) {
    int64_t each = std::max(max_trials.back(), static_cast<int64_t>(divisor));
    return std::vector<int64_t>(max_trials.size(), each);
  }
  int64_t m = std::max(max_concurrent_trials, brackets);
  for (int64_t i = 0; i < brackets; ++i) out.push_back(m / brackets + (i < m % brackets ? 1 : 0));
  return out;
}

Result<std::vector<AshaBracket>> MakeAshaBrackets(const std::string& mode, int max_rungs,
                                                  const std::vector<int>& bracket_rungs,
                                                  double max_units, int64_t max_trials,
                                                  int64_t max_concurrent_trials, double divisor) {
  std::vector<int> rungs = bracket_rungs;
  if (rungs.empty()) {
    int mr = AshaMaxRungs(max_rungs, max_units, max_trials, divisor);
    auto counts = ModeRungCounts(mode, mr);
    if (!counts.ok()) return counts.status();
    rungs = *counts;
  }
  std::sort(rungs.begin(), rungs.end(), [](int a, int b) { return a > b; });
  std::vector<int64_t> trials =
      CapBracketTrials(BracketMaxTrials(max_trials, divisor, rungs), max_trials);
  std::vector<int64_t> mct = BracketMaxConcurrentTrials(max_concurrent_trials, divisor, trials);
  std::vector<AshaBracket> out;
  for (size_t i = 0; i < trials.size(); ++i) out.push_back(AshaBracket{rungs[i], trials[i], mct[i]});
  return out;
}

size_t InsertMetric(std::vector<double>* sorted, double metric) {
  auto it = std::lower_bound(sorted->begin(), sorted->end(), metric);
  size_t idx = static_cast<size_t>(it - sorted->begin());
  sorted->insert(it, metric);
  return idx;
}

int64_t AshaInitialTrials(int64_t max_concurrent_trials, int64_t max_trials, int num_rungs,
                          double divisor) {
  if (max_concurrent_trials > 0) return std::min(max_concurrent_trials, max_trials);
  double full = std::pow(divisor, static_cast<double>(num_rungs - 1));
  int64_t n = full >= 9e18 ? max_trials : static_cast<int64_t>(full);
  return std::clamp<int64_t>(n, 1, std::max<int64_t>(max_trials, 1));
}

}  // namespace det::master::searcher
