#pragma once
// What happens to a webhook delivery after an attempt: a 2xx or 3xx answer delivers it; a 4xx
// refuses it for good (the receiver will not take it); a 5xx or a transport failure (refused,
// timed out) is tried again, 1 s, 2 s, 4 s, 8 s later, until kMaxAttempts attempts were made.
// Pure.

#include <cstdint>
#include <optional>
#include <string>

namespace det::master::webhooks {

inline constexpr int64_t kMaxAttempts = 5;

struct Verdict {
  enum class Kind { kDelivered, kRetry, kGiveUp };
  Kind kind = Kind::kDelivered;
  int64_t next_attempt_at = 0;  // kRetry: micros
};

// `attempts`: the attempts made, this one included; `status`: the HTTP status, unset when the
// request failed before an answer.
Verdict AfterAttempt(int64_t attempts, std::optional<long> status, int64_t now_micros);

}  // namespace det::master::webhooks
