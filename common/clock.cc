#include "common/clock.h"

#include <ctime>

namespace det {

int64_t SystemClock::NowMicros() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FormatRfc3339(int64_t micros) {
  time_t secs = static_cast<time_t>(micros / 1000000);
  int64_t frac = micros % 1000000;
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  struct tm tm_utc;
  gmtime_r(&secs, &tm_utc);
  char buf[64];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm_utc);
  snprintf(buf + n, sizeof(buf) - n, ".%06lldZ", static_cast<long long>(frac));
  return buf;
}

}  // namespace det
