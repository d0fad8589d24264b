#include "master/server/login_throttle.h"

#include <algorithm>

namespace det::master::server {
namespace {

// A key with no failure for this long starts over (a typo last week is not a strike today).
constexpr int64_t kForgetAfterMicros = 3600ll * 1'000'000;

}  // namespace

int64_t LoginThrottle::DelayFor(int failures) const {
  int over = failures - options_.free_failures;
  if (over < 0) return 0;
  int64_t delay = options_.base_delay_micros;
  for (int i = 0; i < over && delay < options_.max_delay_micros; ++i) delay *= 2;
  return std::min(delay, options_.max_delay_micros);
}

int64_t LoginThrottle::RetryAfter(const std::string& key, int64_t now_micros) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return 0;
  if (now_micros - it->second.last_failure > kForgetAfterMicros) return 0;
  if (it->second.failures < options_.free_failures) return 0;
  int64_t until = it->second.last_failure + DelayFor(it->second.failures);
  return std::max<int64_t>(0, until - now_micros);
}

void LoginThrottle::RecordFailure(const std::string& key, int64_t now_micros) {
  MutexLock lock(&mu_);
  if (entries_.size() >= options_.max_tracked_keys && !entries_.count(key)) {
    // Drop the entry whose latest failure is oldest, so memory stays bounded.
    auto oldest = std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.last_failure < b.second.last_failure; });
    if (oldest != entries_.end()) entries_.erase(oldest);
  }
  Entry& e = entries_[key];
  if (now_micros - e.last_failure > kForgetAfterMicros) e.failures = 0;
  e.failures++;
  e.last_failure = now_micros;
}

void LoginThrottle::RecordSuccess(const std::string& key) {
  MutexLock lock(&mu_);
  entries_.erase(key);
}

}  // namespace det::master::server
