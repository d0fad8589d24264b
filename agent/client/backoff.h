#pragma once
// Exponential backoff with jitter for retries against the master.

#include <algorithm>
#include <chrono>
#include <random>

namespace det::agent {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
      : initial_(initial), max_(max), next_(initial), rng_(std::random_device{}()) {}

  // The next delay: grows x2 up to max, with up to 25% jitter subtracted.
  std::chrono::milliseconds Next() {
    auto base = next_;
    next_ = std::min(max_, next_ * 2);
    auto jitter_range = base.count() / 4;
    if (jitter_range <= 0) return base;
    std::uniform_int_distribution<long long> dist(0, jitter_range);
    return std::chrono::milliseconds(base.count() - dist(rng_));
  }

  void Reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds next_;
  std::mt19937 rng_;
};

}  // namespace det::agent
