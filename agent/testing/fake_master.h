#pragma once
// FakeMaster: a tiny in-process HTTP master (Boost.Beast, loopback, ephemeral port) speaking
// the agent protocol, for agent tests. Records what the agent sends.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace det::agent::testing {

class FakeMaster {
 public:
  FakeMaster();
  ~FakeMaster();
  FakeMaster(const FakeMaster&) = delete;
  FakeMaster& operator=(const FakeMaster&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Queues a command for every agent; assigns and returns its seq.
  int64_t QueueCommand(nlohmann::json command);
  // The context of `task_id` (raw tar.gz bytes), served only with `token`.
  void SetContext(const std::string& task_id, const std::string& tgz, const std::string& token);
  // While true, every request answers 503.
  void SetUnavailable(bool v);
  // While true, POST /api/v1/task/logs answers 503.
  void SetLogsUnavailable(bool v);

  std::vector<nlohmann::json> registrations();
  std::vector<nlohmann::json> events();
  std::vector<nlohmann::json> logs();
  std::vector<std::string> log_tokens();

  // Polls `pred` (under no lock) until true or timeout.
  static bool WaitFor(const std::function<bool()>& pred,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20));

 private:
  struct Request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;
    std::string body;
  };
  struct Response {
    int status = 200;
    std::string body = "{}";
  };
  void AcceptLoop();
  void Serve(int fd);
  Response Handle(const Request& request);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> conn_threads_;                                // guarded by mu_
  std::vector<int> conn_fds_;                                            // guarded by mu_
  std::vector<nlohmann::json> commands_;                                 // guarded by mu_
  int64_t next_seq_ = 1;                                                 // guarded by mu_
  std::map<std::string, std::pair<std::string, std::string>> contexts_;  // task -> (tgz, token)
  bool unavailable_ = false;
  bool logs_unavailable_ = false;
  std::vector<nlohmann::json> registrations_;
  std::vector<nlohmann::json> events_;
  std::vector<nlohmann::json> logs_;
  std::vector<std::string> log_tokens_;
};

}  // namespace det::agent::testing
