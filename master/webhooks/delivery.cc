#include "master/webhooks/delivery.h"

#include <algorithm>

namespace det::master::webhooks {

Verdict AfterAttempt(int64_t attempts, std::optional<long> status, int64_t now_micros) {
  Verdict v;
  if (status && *status < 400) return v;
  if (status && *status < 500) {
    v.kind = Verdict::Kind::kGiveUp;
    return v;
  }
  if (attempts >= kMaxAttempts) {
    v.kind = Verdict::Kind::kGiveUp;
    return v;
  }
  v.kind = Verdict::Kind::kRetry;
  int64_t shift = std::clamp<int64_t>(attempts - 1, 0, 20);
  v.next_attempt_at = now_micros + (int64_t{1'000'000} << shift);
  return v;
}

}  // namespace det::master::webhooks
