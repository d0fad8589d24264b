#include "agent/log_shipper.h"

#include <spdlog/spdlog.h>

#include "agent/client/backoff.h"
#include "agent/log_line.h"

namespace det::agent {

LogShipper::LogShipper(LogMetadata metadata, std::unique_ptr<Poster> poster, const Clock* clock,
                       LogShipperOptions options)
    : metadata_(std::move(metadata)), poster_(std::move(poster)), clock_(clock), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

LogShipper::~LogShipper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

nlohmann::json LogShipper::Entry(const std::string& stdtype, std::optional<int> rank_id,
                                 std::optional<std::string> level, std::string log) const {
  nlohmann::json e = {
      {"taskId", metadata_.task_id},
      {"allocationId", metadata_.allocation_id},
      {"agentId", metadata_.agent_id},
      {"containerId", metadata_.container_id},
      {"stdtype", stdtype},
      {"source", "task"},
      {"timestamp", FormatRfc3339(clock_->NowMicros())},
      {"log", std::move(log)},
  };
  if (rank_id) e["rankId"] = *rank_id;
  if (level) e["level"] = *level;
  return e;
}

void LogShipper::AddLine(const std::string& stdtype, std::string_view line) {
  ParsedLogLine parsed = ParseLogLine(line);
  Enqueue(Entry(stdtype, parsed.rank_id, std::move(parsed.level), std::move(parsed.log)));
}

void LogShipper::AddRaw(const std::string& stdtype, std::optional<std::string> level,
                        std::string log) {
  Enqueue(Entry(stdtype, std::nullopt, std::move(level), std::move(log)));
}

void LogShipper::Enqueue(nlohmann::json entry) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stop_ || buffer_.size() < options_.max_buffered; });
  if (stop_) return;
  buffer_.push_back(std::move(entry));
  ++added_;
  if (buffer_.size() == 1 || buffer_.size() >= options_.max_batch) cv_.notify_all();
}

bool LogShipper::Flush(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t target = added_;
  ++flush_waiters_;
  cv_.notify_all();
  bool done = cv_.wait_until(lock, deadline, [&] { return stop_ || shipped_ >= target; });
  --flush_waiters_;
  return done && shipped_ >= target;
}

uint64_t LogShipper::shipped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shipped_;
}

void LogShipper::Loop() {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !buffer_.empty(); });
    if (stop_) return;
    // Let a batch fill up for at most one interval unless someone is waiting for it.
    auto batch_deadline = std::chrono::steady_clock::now() + options_.flush_interval;
    cv_.wait_until(lock, batch_deadline, [this] {
      return stop_ || flush_waiters_ > 0 || buffer_.size() >= options_.max_batch;
    });
    if (stop_) return;
    size_t n = std::min(buffer_.size(), options_.max_batch);
    nlohmann::json logs = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) logs.push_back(buffer_[i]);
    lock.unlock();
    std::string body = nlohmann::json{{"logs", std::move(logs)}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    int failures = 0;
    while (true) {
      Status s = poster_->Post(body);
      if (s.ok()) break;
      if (s.code() == StatusCode::kInvalidArgument) {
        spdlog::error("allocation {}: master rejected {} log lines: {}", metadata_.allocation_id, n,
                      s.message());
        break;
      }
      if (failures++ == 0) {
        spdlog::warn("allocation {}: shipping logs failed, will retry: {}", metadata_.allocation_id,
                     s.message());
      }
      lock.lock();
      cv_.wait_for(lock, backoff.Next(), [this] { return stop_; });
      if (stop_) return;
      lock.unlock();
    }
    if (failures > 0) spdlog::info("allocation {}: shipping logs again", metadata_.allocation_id);
    backoff.Reset();
    lock.lock();
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(n));
    shipped_ += n;
    cv_.notify_all();
  }
}

}  // namespace det::agent
