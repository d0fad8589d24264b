#pragma once
// FakeLauncher: records launches; tests drive output and exits of the fake processes.

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/launcher/launcher.h"

namespace det::agent {

// Shared between the test and the FakeProcess handed to the code under test.
class FakeProcessState {
 public:
  FakeProcessState(LaunchSpec spec, OutputCallback on_output, int pid)
      : spec_(std::move(spec)), on_output_(std::move(on_output)), pid_(pid) {}

  const LaunchSpec& spec() const { return spec_; }
  int pid() const { return pid_; }

  void Emit(StdType type, std::string_view data) {
    if (on_output_) on_output_(type, data);
  }

  void Exit(int code) {
    std::lock_guard<std::mutex> lock(mu_);
    if (exit_code_) return;
    exit_code_ = code;
    cv_.notify_all();
  }

  int Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return exit_code_.has_value(); });
    return *exit_code_;
  }

  bool exited() {
    std::lock_guard<std::mutex> lock(mu_);
    return exit_code_.has_value();
  }

  // Records the signal; SIGKILL (and SIGTERM when exit_on_term) ends the process with 128+N.
  void Signal(int signo) {
    std::lock_guard<std::mutex> lock(mu_);
    signals_.push_back(signo);
    if (!exit_code_ && (signo == SIGKILL || (signo == SIGTERM && exit_on_term_))) {
      exit_code_ = 128 + signo;
      cv_.notify_all();
    }
  }

  std::vector<int> signals() {
    std::lock_guard<std::mutex> lock(mu_);
    return signals_;
  }

  void set_exit_on_term(bool v) {
    std::lock_guard<std::mutex> lock(mu_);
    exit_on_term_ = v;
  }

 private:
  const LaunchSpec spec_;
  const OutputCallback on_output_;
  const int pid_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<int> exit_code_;
  std::vector<int> signals_;
  bool exit_on_term_ = false;
};

class FakeProcess : public Process {
 public:
  explicit FakeProcess(std::shared_ptr<FakeProcessState> state) : state_(std::move(state)) {}
  int pid() const override { return state_->pid(); }
  Status Signal(int signo) override {
    state_->Signal(signo);
    return Status::Ok();
  }
  int Wait() override { return state_->Wait(); }

 private:
  std::shared_ptr<FakeProcessState> state_;
};

class FakeLauncher : public Launcher {
 public:
  Result<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                          OutputCallback on_output) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_next_) {
      Status s = *fail_next_;
      fail_next_.reset();
      return s;
    }
    auto state = std::make_shared<FakeProcessState>(spec, std::move(on_output), next_pid_++);
    processes_.push_back(state);
    cv_.notify_all();
    return std::unique_ptr<Process>(std::make_unique<FakeProcess>(state));
  }

  void FailNextLaunch(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = std::move(status);
  }

  // Waits until at least `n` processes were launched; returns the n-th (1-based) or null.
  std::shared_ptr<FakeProcessState> WaitForLaunch(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return processes_.size() >= n; })) return nullptr;
    return processes_[n - 1];
  }

  size_t launch_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return processes_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<FakeProcessState>> processes_;
  std::optional<Status> fail_next_;
  int next_pid_ = 1000;
};

}  // namespace det::agent
