#pragma once
// LogBuffer: the master's own recent log lines, kept in memory for GET /api/v1/master/logs
// (`det master logs [-f]`). Entries get increasing ids from 1; the oldest are dropped past the
// capacity. Thread-safe; readers may wait for lines newer than an id.

#include <spdlog/sinks/base_sink.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace det::master::server {

struct LogEntry {
  int64_t id = 0;
  int64_t timestamp = 0;  // micros since the epoch
  std::string level;      // Determined's LOG_LEVEL_* name
  std::string message;
};

class LogBuffer {
 public:
  explicit LogBuffer(size_t capacity = 10000);

  void Append(int64_t timestamp, std::string level, std::string message);
  // Entries with id > `after_id`, oldest first, at most `limit` (0: all).
  std::vector<LogEntry> After(int64_t after_id, size_t limit = 0) const;
  // The last `n` entries, oldest first.
  std::vector<LogEntry> Tail(size_t n) const;
  // Blocks until an entry with id > `after_id` exists or `timeout_ms` passes; true if one does.
  bool WaitAfter(int64_t after_id, int64_t timeout_ms) const;

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<LogEntry> entries_;
  int64_t next_id_ = 1;
};

// Maps spdlog's level to Determined's LOG_LEVEL_* name.
std::string LogLevelName(spdlog::level::level_enum level);

// A spdlog sink that appends every formatted line's payload to a LogBuffer.
class LogBufferSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogBufferSink(std::shared_ptr<LogBuffer> buffer) : buffer_(std::move(buffer)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  std::shared_ptr<LogBuffer> buffer_;
};

}  // namespace det::master::server
