#pragma once
// FakePoster: records bodies; can fail a number of times first.

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/client/poster.h"

namespace det::agent::testing {

class FakePosterState {
 public:
  void FailNext(int n, Status status = Unavailable("master down")) {
    std::lock_guard<std::mutex> lock(mu_);
    failures_left_ = n;
    failure_ = std::move(status);
  }
  Status Post(const std::string& body) {
    std::lock_guard<std::mutex> lock(mu_);
    ++attempts_;
    if (failures_left_ > 0) {
      --failures_left_;
      return failure_;
    }
    bodies_.push_back(nlohmann::json::parse(body));
    return Status::Ok();
  }
  std::vector<nlohmann::json> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  int attempts() {
    std::lock_guard<std::mutex> lock(mu_);
    return attempts_;
  }

 private:
  std::mutex mu_;
  int failures_left_ = 0;
  Status failure_;
  int attempts_ = 0;
  std::vector<nlohmann::json> bodies_;
};

class FakePoster : public Poster {
 public:
  explicit FakePoster(std::shared_ptr<FakePosterState> state) : state_(std::move(state)) {}
  Status Post(const std::string& body) override { return state_->Post(body); }

 private:
  std::shared_ptr<FakePosterState> state_;
};

}  // namespace det::agent::testing
