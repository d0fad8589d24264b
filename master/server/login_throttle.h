#pragma once
// LoginThrottle: slows password guessing. After `free_failures` failed logins in a row for one
// key (a username, or a client address), each further attempt for that key waits an exponential
// back-off (1 s, 2 s, 4 s, ... up to `max_delay`) counted from the latest failure; a successful
// login clears the username's count and the address's. No I/O; time comes from the caller.

#include <cstdint>
#include <map>
#include <string>

#include "common/thread_annotations.h"

namespace det::master::server {

struct LoginThrottleOptions {
  int free_failures = 5;
  int64_t base_delay_micros = 1'000'000;
  int64_t max_delay_micros = 15ll * 60 * 1'000'000;
  size_t max_tracked_keys = 100'000;  // beyond this, the oldest entries are dropped
};

class LoginThrottle {
 public:
  explicit LoginThrottle(LoginThrottleOptions options = {}) : options_(options) {}

  // Microseconds until `key` may try again (0: now).
  int64_t RetryAfter(const std::string& key, int64_t now_micros) const EXCLUDES(mu_);
  void RecordFailure(const std::string& key, int64_t now_micros) EXCLUDES(mu_);
  void RecordSuccess(const std::string& key) EXCLUDES(mu_);

 private:
  struct Entry {
    int failures = 0;
    int64_t last_failure = 0;
  };
  int64_t DelayFor(int failures) const;

  const LoginThrottleOptions options_;
  mutable Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
};

}  // namespace det::master::server
