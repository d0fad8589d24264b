#pragma once
// LogShipper: ships one allocation's output lines to POST /api/v1/task/logs in batches
// (<= max_batch lines or flush_interval), retrying with backoff until the master takes them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "agent/client/poster.h"
#include "common/clock.h"

namespace det::agent {

struct LogMetadata {
  std::string task_id;
  std::string allocation_id;
  std::string agent_id;
  std::string container_id;
};

struct LogShipperOptions {
  size_t max_batch = 1000;
  std::chrono::milliseconds flush_interval{1000};
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  // AddLine blocks while this many lines wait (back-pressure on the process, never drops).
  size_t max_buffered = 100000;
};

class LogShipper {
 public:
  LogShipper(LogMetadata metadata, std::unique_ptr<Poster> poster, const Clock* clock,
             LogShipperOptions options = {});
  ~LogShipper();  // abandons what was not shipped yet
  LogShipper(const LogShipper&) = delete;
  LogShipper& operator=(const LogShipper&) = delete;

  // Parses one complete line (ending in '\n') of `stdtype` ("stdout"|"stderr") and queues it.
  void AddLine(const std::string& stdtype, std::string_view line);
  // Queues a line as it is (no prefix parsing), e.g. the agent's own error messages.
  void AddRaw(const std::string& stdtype, std::optional<std::string> level, std::string log);

  // Waits until every line queued so far is shipped; false if `deadline` came first.
  bool Flush(std::chrono::steady_clock::time_point deadline);

  uint64_t shipped() const;

 private:
  void Loop();
  nlohmann::json Entry(const std::string& stdtype, std::optional<int> rank_id,
                       std::optional<std::string> level, std::string log) const;
  void Enqueue(nlohmann::json entry);

  const LogMetadata metadata_;
  std::unique_ptr<Poster> poster_;
  const Clock* clock_;
  const LogShipperOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> buffer_;  // guarded by mu_
  uint64_t added_ = 0;                 // guarded by mu_
  uint64_t shipped_ = 0;               // guarded by mu_ (includes dropped, rejected batches)
  int flush_waiters_ = 0;              // guarded by mu_
  bool stop_ = false;                  // guarded by mu_
  std::thread thread_;
};

}  // namespace det::agent
