#pragma once
// EventSender: queues `started`/`exited` events and posts them, in order, to
// POST /agents/{id}/events until the master accepts them (it dedups by allocation id).

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "agent/client/poster.h"

namespace det::agent {

struct AgentEvent {
  std::string type;  // "started" | "exited"
  std::string allocation_id;
  std::optional<int> pid;
  std::optional<int> exit_code;
  std::optional<std::string> error;

  static AgentEvent Started(std::string allocation_id, int pid);
  static AgentEvent Exited(std::string allocation_id, int exit_code,
                           std::optional<std::string> error = std::nullopt);
  nlohmann::json ToJson() const;
};

class EventSender {
 public:
  EventSender(std::unique_ptr<Poster> poster, std::chrono::milliseconds initial_backoff,
              std::chrono::milliseconds max_backoff);
  ~EventSender();  // abandons unsent events
  EventSender(const EventSender&) = delete;
  EventSender& operator=(const EventSender&) = delete;

  void Enqueue(AgentEvent event);
  // Waits until every event queued so far was accepted; false if `deadline` came first.
  bool Flush(std::chrono::steady_clock::time_point deadline);
  // Allocations whose "exited" event the master has not accepted yet.
  std::set<std::string> UnsentExits();

 private:
  void Loop();

  std::unique_ptr<Poster> poster_;
  const std::chrono::milliseconds initial_backoff_;
  const std::chrono::milliseconds max_backoff_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<AgentEvent> queue_;  // guarded by mu_
  uint64_t added_ = 0;            // guarded by mu_
  uint64_t sent_ = 0;             // guarded by mu_
  bool stop_ = false;             // guarded by mu_
  std::thread thread_;
};

}  // namespace det::agent
