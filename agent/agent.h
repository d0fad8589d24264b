#pragma once
// Agent: registers with the master, long-polls for commands, runs allocations and reports their
// events. The composition root of the agent; main.cc only builds its config.

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_config.h"
#include "agent/allocation_runner.h"
#include "agent/client/command.h"
#include "agent/client/event_sender.h"
#include "agent/client/master_client.h"
#include "common/data_dir_lock.h"
#include "agent/detect/slots.h"
#include "agent/entrypoint.h"
#include "agent/launcher/launcher.h"
#include "common/clock.h"

namespace det::agent {

class Agent {
 public:
  Agent(AgentConfig config, std::vector<Slot> slots, std::unique_ptr<Launcher> launcher,
        const Clock* clock);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Ends what a killed previous run left (see orphan_cleanup.h), then runs until Stop(); then
  // kills running process groups, waits (up to shutdown_grace) for their logs and exit events
  // to reach the master, and returns.
  Status Run();
  // Thread-safe; not async-signal-safe (call it from a signal-waiting thread).
  void Stop();

  // Allocations whose processes are still supervised.
  std::vector<std::string> RunningAllocations();
  bool registered();

 private:
  // Ends the processes a previous run of this agent (same data dir) left when it was killed.
  void CleanUpOrphans();
  void PollLoop();
  // Registers once; returns the master's commandSeq.
  std::optional<int64_t> Register(MasterClient& client);
  void Handle(const Command& command);
  void StartAllocation(const Command& command);
  void ReapFinished();
  // Sleeps unless Stop() comes first; returns false when stopping.
  bool SleepUnlessStopped(std::chrono::milliseconds d);

  const AgentConfig config_;
  std::unique_ptr<DataDirLock> data_dir_lock_;  // held from Run() on
  const std::vector<Slot> slots_;
  std::unique_ptr<Launcher> launcher_;
  const Clock* clock_;
  MasterAddress master_;
  std::map<std::string, std::string> base_env_;
  std::unique_ptr<EventSender> events_;
  ContextCache contexts_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                                                 // guarded by mu_
  bool poll_done_ = false;                                            // guarded by mu_
  bool registered_ = false;                                           // guarded by mu_
  std::string cluster_id_;                                            // guarded by mu_
  std::string master_id_;                                             // guarded by mu_
  std::map<std::string, std::unique_ptr<AllocationRunner>> runners_;  // guarded by mu_
  std::set<std::string> finished_;  // guarded by mu_; allocation ids that exited
  std::thread poll_thread_;
};

}  // namespace det::agent
