#include "agent/client/event_sender.h"

#include <spdlog/spdlog.h>

#include "agent/client/backoff.h"

namespace det::agent {

AgentEvent AgentEvent::Started(std::string allocation_id, int pid) {
  AgentEvent e;
  e.type = "started";
  e.allocation_id = std::move(allocation_id);
  e.pid = pid;
  return e;
}

AgentEvent AgentEvent::Exited(std::string allocation_id, int exit_code,
                              std::optional<std::string> error) {
  AgentEvent e;
  e.type = "exited";
  e.allocation_id = std::move(allocation_id);
  e.exit_code = exit_code;
  e.error = std::move(error);
  return e;
}

nlohmann::json AgentEvent::ToJson() const {
  nlohmann::json j = {{"type", type}, {"allocationId", allocation_id}};
  if (pid) j["pid"] = *pid;
  if (exit_code) j["exitCode"] = *exit_code;
  if (error) j["error"] = *error;
  return j;
}

EventSender::EventSender(std::unique_ptr<Poster> poster, std::chrono::milliseconds initial_backoff,
                         std::chrono::milliseconds max_backoff)
    : poster_(std::move(poster)), initial_backoff_(initial_backoff), max_backoff_(max_backoff) {
  thread_ = std::thread([this] { Loop(); });
}

EventSender::~EventSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EventSender::Enqueue(AgentEvent event) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(event));
  ++added_;
  cv_.notify_all();
}

bool EventSender::Flush(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t target = added_;
  return cv_.wait_until(lock, deadline, [&] { return sent_ >= target; });
}

std::set<std::string> EventSender::UnsentExits() {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> ids;
  for (const AgentEvent& e : queue_) {
    if (e.type == "exited") ids.insert(e.allocation_id);
  }
  return ids;
}

void EventSender::Loop() {
  Backoff backoff(initial_backoff_, max_backoff_);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    size_t n = queue_.size();
    nlohmann::json events = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) events.push_back(queue_[i].ToJson());
    lock.unlock();
    std::string body = nlohmann::json{{"events", std::move(events)}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    int failures = 0;
    auto posting = std::chrono::steady_clock::now();
    while (true) {
      Status s = poster_->Post(body);
      if (s.ok()) {
        // The timeline of a trial start (docs/operations.md, "Trial start cost").
        spdlog::debug("posted {} event(s) in {} ms", n,
                      std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - posting)
                          .count());
        break;
      }
      if (s.code() == StatusCode::kInvalidArgument) {
        spdlog::error("master rejected {} events: {}", n, s.message());
        break;
      }
      if (failures++ == 0) spdlog::warn("posting events failed, will retry: {}", s.message());
      lock.lock();
      cv_.wait_for(lock, backoff.Next(), [this] { return stop_; });
      if (stop_) return;
      lock.unlock();
    }
    backoff.Reset();
    lock.lock();
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(n));
    sent_ += n;
    cv_.notify_all();
  }
}

}  // namespace det::agent
