#include "master/server/log_buffer.h"

#include <chrono>

namespace det::master::server {

LogBuffer::LogBuffer(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

void LogBuffer::Append(int64_t timestamp, std::string level, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back({next_id_++, timestamp, std::move(level), std::move(message)});
    while (entries_.size() > capacity_) entries_.pop_front();
  }
  cv_.notify_all();
}

std::vector<LogEntry> LogBuffer::After(int64_t after_id, size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LogEntry> out;
  for (const auto& e : entries_) {
    if (e.id <= after_id) continue;
    if (limit != 0 && out.size() >= limit) break;
    out.push_back(e);
  }
  return out;
}

std::vector<LogEntry> LogBuffer::Tail(size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t start = entries_.size() > n ? entries_.size() - n : 0;
  return std::vector<LogEntry>(entries_.begin() + static_cast<std::ptrdiff_t>(start),
                               entries_.end());
}

bool LogBuffer::WaitAfter(int64_t after_id, int64_t timeout_ms) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return !entries_.empty() && entries_.back().id > after_id; });
}

std::string LogLevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "LOG_LEVEL_TRACE";
    case spdlog::level::debug:
      return "LOG_LEVEL_DEBUG";
    case spdlog::level::info:
      return "LOG_LEVEL_INFO";
    case spdlog::level::warn:
      return "LOG_LEVEL_WARNING";
    case spdlog::level::err:
      return "LOG_LEVEL_ERROR";
    case spdlog::level::critical:
      return "LOG_LEVEL_CRITICAL";
    default:
      return "LOG_LEVEL_UNSPECIFIED";
  }
}

void LogBufferSink::sink_it_(const spdlog::details::log_msg& msg) {
  int64_t micros =
      std::chrono::duration_cast<std::chrono::microseconds>(msg.time.time_since_epoch()).count();
  buffer_->Append(micros, LogLevelName(msg.level),
                  std::string(msg.payload.data(), msg.payload.size()));
}

}  // namespace det::master::server
