#include "agent/agent.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <optional>
#include <set>

#include "agent/client/backoff.h"
#include "agent/orphan_cleanup.h"

namespace det::agent {

Agent::Agent(AgentConfig config, std::vector<Slot> slots, std::unique_ptr<Launcher> launcher,
             const Clock* clock)
    : config_(std::move(config)),
      slots_(std::move(slots)),
      launcher_(std::move(launcher)),
      clock_(clock),
      contexts_(config_.context_cache_bytes) {
  auto master = ParseMasterUrl(config_.master_url);
  if (master.ok()) master_ = *master;
  base_env_ = CurrentEnvironment();
  events_ = std::make_unique<EventSender>(
      std::make_unique<HttpPoster>(master_.url,
                                   "/agents/" + UrlEncode(config_.agent_id) + "/events",
                                   AgentCredentialHeaders(config_)),
      config_.retry_initial, config_.retry_max);
}

Agent::~Agent() {
  Stop();
  if (poll_thread_.joinable()) poll_thread_.join();
  std::map<std::string, std::unique_ptr<AllocationRunner>> runners;
  {
    std::lock_guard<std::mutex> lock(mu_);
    runners.swap(runners_);
  }
  runners.clear();  // kills and joins
  events_.reset();
}

void Agent::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
}

bool Agent::SleepUnlessStopped(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stop_; });
}

std::vector<std::string> Agent::RunningAllocations() {
  // An allocation whose exit the master has not heard of yet still counts as running: the master
  // re-adopts it and then learns of the exit from the queued event, rather than taking it for
  // lost (and rerunning the trial) when the process ended while the master was away.
  std::set<std::string> ids = events_->UnsentExits();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, runner] : runners_) {
    if (!finished_.count(id)) ids.insert(id);
  }
  return {ids.begin(), ids.end()};
}

bool Agent::registered() {
  std::lock_guard<std::mutex> lock(mu_);
  return registered_;
}

Status Agent::Run() {
  DET_RETURN_IF_ERROR(ParseMasterUrl(config_.master_url).status());
  spdlog::info("agent {}: {} slot(s), master {}, work root {}/work", config_.agent_id,
               slots_.size(), master_.url, config_.data_dir);
  DET_ASSIGN_OR_RETURN(data_dir_lock_, DataDirLock::Acquire(config_.data_dir, "agent.lock", "agent"));
  CleanUpOrphans();
  launcher_->Start();  // after the cleanup, which ends a previous run's warm python
  poll_thread_ = std::thread([this] { PollLoop(); });

  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stop_; });
  auto deadline = std::chrono::steady_clock::now() + config_.shutdown_grace;
  int alive = 0;
  for (auto& [id, runner] : runners_) {
    if (!finished_.count(id)) ++alive;
    runner->SetShutdownDeadline(deadline);
    runner->Kill();
  }
  spdlog::info("agent {}: stopping; killed {} allocation(s)", config_.agent_id, alive);
  cv_.wait_until(lock, deadline, [this] {
    for (const auto& [id, runner] : runners_) {
      if (!finished_.count(id)) return false;
    }
    return true;
  });
  lock.unlock();
  if (!events_->Flush(deadline))
    spdlog::warn("agent {}: some events were not delivered", config_.agent_id);
  if (config_.wait_for_poll_on_shutdown) {
    poll_thread_.join();
  } else {
    lock.lock();
    bool done = poll_done_;
    lock.unlock();
    if (done) {
      poll_thread_.join();
    } else {
      poll_thread_.detach();  // blocked in a long poll; the process exits next
    }
  }
  spdlog::info("agent {}: stopped", config_.agent_id);
  return Status::Ok();
}

void Agent::CleanUpOrphans() {
  auto cleaned = CleanUpStaleAllocations(config_.data_dir);
  if (!cleaned.ok()) {
    spdlog::warn("agent {}: cleaning up after a previous run: {}", config_.agent_id,
                 cleaned.status().message());
    return;
  }
  for (const CleanedAllocation& c : *cleaned) {
    std::string pids;
    for (int pid : c.killed_pids) pids += (pids.empty() ? "" : " ") + std::to_string(pid);
    if (c.gone) {
      spdlog::info(
          "agent {}: cleaned up allocation {} left by a previous run (recorded pid {}); "
          "killed {} process(es){}{}",
          config_.agent_id, c.allocation_id, c.recorded_pid, c.killed_pids.size(),
          pids.empty() ? "" : ": ", pids);
    } else {
      spdlog::warn(
          "agent {}: allocation {} left by a previous run still has processes after "
          "SIGKILL (killed: {}); will retry on the next start",
          config_.agent_id, c.allocation_id, pids);
    }
  }
}

std::optional<int64_t> Agent::Register(MasterClient& client) {
  RegisterRequest request;
  request.resource_pool = config_.resource_pool;
  request.hostname = config_.hostname;
  request.version = config_.version;
  request.slots = slots_;
  request.running = RunningAllocations();
  if (!config_.container_runtime.empty()) {
    request.container_runtimes.push_back(config_.container_runtime);
  }
  auto resp = client.Register(request);
  if (!resp.ok()) {
    spdlog::warn("agent {}: register failed: {}", config_.agent_id, resp.status().message());
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  registered_ = true;
  cluster_id_ = resp->cluster_id;
  master_id_ = resp->master_id;
  spdlog::info("agent {}: registered with master {} (cluster {}), {} running allocation(s)",
               config_.agent_id, master_id_, cluster_id_, request.running.size());
  return resp->command_seq;
}

void Agent::PollLoop() {
  MasterClient client(master_.url, config_.agent_id, AgentCredentialHeaders(config_));
  Backoff backoff(config_.retry_initial, config_.retry_max);
  int64_t last_seq = 0;
  bool registered = false;
  bool first_registration = true;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) break;
    }
    ReapFinished();
    if (!registered) {
      std::optional<int64_t> command_seq = Register(client);
      if (!command_seq) {
        if (!SleepUnlessStopped(backoff.Next())) break;
        continue;
      }
      // commandSeq is the last seq the master issued. On a re-registration keep the lower of
      // it and ours, so commands queued while we were away are not skipped (they are
      // idempotent by allocation id) and a restarted master's reset counter is followed.
      last_seq = first_registration ? *command_seq : std::min(last_seq, *command_seq);
      first_registration = false;
      registered = true;
      backoff.Reset();
    }
    auto commands = client.PollCommands(last_seq, config_.poll_timeout_seconds);
    if (!commands.ok()) {
      spdlog::warn("agent {}: polling commands failed: {}", config_.agent_id,
                   commands.status().message());
      registered = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        registered_ = false;
      }
      if (!SleepUnlessStopped(backoff.Next())) break;
      continue;
    }
    backoff.Reset();
    for (const Command& command : *commands) {
      if (command.seq <= last_seq) continue;
      last_seq = command.seq;
      Handle(command);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  poll_done_ = true;
  cv_.notify_all();
}

void Agent::Handle(const Command& command) {
  if (!command.parse_error.empty()) {
    spdlog::warn("agent {}: ignoring command {}: {}", config_.agent_id, command.seq,
                 command.parse_error);
    return;
  }
  spdlog::debug("agent {}: command {} {} {}", config_.agent_id, command.seq, command.type,
                command.allocation_id);
  if (command.type == "start") {
    StartAllocation(command);
    return;
  }
  int signo = SIGKILL;
  if (command.type == "signal") {
    auto parsed = ParseSignal(command.signal);
    if (!parsed.ok()) {
      spdlog::warn("agent {}: ignoring command {}: {}", config_.agent_id, command.seq,
                   parsed.status().message());
      return;
    }
    signo = *parsed;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = runners_.find(command.allocation_id);
  if (it == runners_.end() || finished_.count(command.allocation_id)) {
    spdlog::info("agent {}: {} for allocation {} that is not running; ignored", config_.agent_id,
                 command.type, command.allocation_id);
    return;
  }
  spdlog::info("agent {}: {} allocation {} (signal {})", config_.agent_id, command.type,
               command.allocation_id, signo);
  it->second->Signal(signo);
}

void Agent::StartAllocation(const Command& command) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return;
  if (runners_.count(command.allocation_id) || finished_.count(command.allocation_id)) {
    spdlog::info("agent {}: allocation {} already started; duplicate start ignored",
                 config_.agent_id, command.allocation_id);
    return;
  }
  RunnerEnv env;
  env.config = &config_;
  env.master = master_;
  env.cluster_id = cluster_id_;
  env.master_id = master_id_;
  env.slots = slots_;
  env.base_env = base_env_;
  env.launcher = launcher_.get();
  env.events = events_.get();
  env.contexts = config_.context_cache_bytes > 0 ? &contexts_ : nullptr;
  env.clock = clock_;
  auto runner =
      std::make_unique<AllocationRunner>(command, std::move(env), [this](const std::string& id) {
        std::lock_guard<std::mutex> l(mu_);
        finished_.insert(id);
        // Its exit event is queued; Run() delivers it before returning.
        if (config_.exit_after_allocation) stop_ = true;
        cv_.notify_all();
      });
  AllocationRunner* raw = runner.get();
  runners_[command.allocation_id] = std::move(runner);
  raw->Start();
}

void Agent::ReapFinished() {
  std::vector<std::unique_ptr<AllocationRunner>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = runners_.begin(); it != runners_.end();) {
      if (it->second->done()) {
        done.push_back(std::move(it->second));
        it = runners_.erase(it);
      } else {
        ++it;
      }
    }
  }
  done.clear();  // joins outside the lock
}

}  // namespace det::agent
