#pragma once
// AllocationRunner: runs one allocation on its own thread: work dir, context download and
// extraction, launch, log shipping, `started`/`exited` events.

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_config.h"
#include "agent/client/command.h"
#include "agent/client/event_sender.h"
#include "agent/context_cache.h"
#include "agent/detect/slots.h"
#include "agent/entrypoint.h"
#include "agent/launcher/launcher.h"
#include "agent/log_line.h"
#include "agent/log_shipper.h"
#include "common/clock.h"

namespace det::agent {

// What a runner needs from the agent; copied when the allocation starts.
struct RunnerEnv {
  const AgentConfig* config = nullptr;
  MasterAddress master;
  std::string cluster_id;
  std::string master_id;
  std::vector<Slot> slots;
  std::map<std::string, std::string> base_env;
  Launcher* launcher = nullptr;
  EventSender* events = nullptr;
  ContextCache* contexts = nullptr;  // null: every trial downloads its context
  const Clock* clock = nullptr;
  // Builds the poster the log shipper uses (tests pass a fake); null: HTTP to the master.
  std::function<std::unique_ptr<Poster>(const std::string& token)> log_poster_factory;
};

class AllocationRunner {
 public:
  // `on_done` runs on the runner's thread after the `exited` event was queued.
  AllocationRunner(Command start, RunnerEnv env, std::function<void(const std::string&)> on_done);
  ~AllocationRunner();  // joins the thread
  AllocationRunner(const AllocationRunner&) = delete;
  AllocationRunner& operator=(const AllocationRunner&) = delete;

  void Start();
  // SIGKILL to the process group, or no launch at all when it has not started yet. Idempotent.
  void Kill();
  // Delivers a signal to the process group; SIGKILL/SIGTERM before launch cancel the launch.
  void Signal(int signo);
  // After this, waiting for logs gives up at `deadline` (agent shutdown).
  void SetShutdownDeadline(std::chrono::steady_clock::time_point deadline);

  const std::string& allocation_id() const { return start_.allocation_id; }
  bool done() const { return done_.load(); }

 private:
  void Run();
  Status Prepare(const std::string& workdir);
  // Turns `spec` into the container client's command (start_.container names the image).
  Status MakeContainerSpec(const AgentEnv& agent_env, LaunchSpec* spec);
  void Fail(int exit_code, const std::string& error);
  void WarnIfFailed(const Status& status) const;
  void FlushLogs();
  void OnOutput(StdType type, std::string_view data);

  const Command start_;
  const RunnerEnv env_;
  const std::function<void(const std::string&)> on_done_;
  std::unique_ptr<LogShipper> shipper_;
  std::array<LineSplitter, 2> splitters_;  // used by the launcher's output thread, then Run()

  std::mutex mu_;
  bool kill_requested_ = false;                   // guarded by mu_
  std::unique_ptr<Process> process_;              // guarded by mu_
  std::atomic<int64_t> shutdown_deadline_ns_{0};  // steady_clock; 0: none
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace det::agent
