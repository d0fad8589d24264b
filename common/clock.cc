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

std::optional<int64_t> ParseRfc3339(const std::string& text) {
  struct tm tm_utc = {};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm_utc);
  if (rest == nullptr) return std::nullopt;
  int64_t micros = 0;
  if (*rest == '.') {
    ++rest;
    int digits = 0;
    while (isdigit(static_cast<unsigned char>(*rest))) {
      if (digits < 6) {
        micros = micros * 10 + (*rest - '0');
        ++digits;
      }
      ++rest;
    }
    while (digits++ < 6) micros *= 10;
  }
  int64_t offset = 0;
  if (*rest == '+' || *rest == '-') {
    int hh = 0, mm = 0;
    if (sscanf(rest + 1, "%2d:%2d", &hh, &mm) != 2) return std::nullopt;
    offset = (hh * 3600 + mm * 60) * (*rest == '+' ? 1 : -1);
  } else if (*rest != 'Z' && *rest != '\0') {
    return std::nullopt;
  }
  return (static_cast<int64_t>(timegm(&tm_utc)) - offset) * 1000000 + micros;
}

}  // namespace det
