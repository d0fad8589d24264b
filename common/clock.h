#pragma once
// Clock: injected wherever logic needs the time, so tests use FakeClock instead of sleeping.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace det {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch.
  virtual int64_t NowMicros() const = 0;
};

class SystemClock : public Clock {
 public:
  int64_t NowMicros() const override;
};

class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_micros = 1700000000000000) : now_(start_micros) {}
  int64_t NowMicros() const override { return now_.load(); }
  void Advance(int64_t micros) { now_ += micros; }

 private:
  std::atomic<int64_t> now_;
};

// RFC 3339 UTC timestamp with 6 fractional digits, e.g. 2024-01-02T03:04:05.123456Z.
std::string FormatRfc3339(int64_t micros);
// Parses "2024-01-02T03:04:05[.ffffff](Z|+hh:mm)" into micros since the epoch; nullopt if bad.
std::optional<int64_t> ParseRfc3339(const std::string& text);

}  // namespace det
