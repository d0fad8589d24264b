#include "master/server/provisioner_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace det::master::server {

namespace {

// A failed launch is not retried for this long (no spawn storm when the agent cannot start).
constexpr int64_t kLaunchBackoffMs = 5000;
// The worker refreshes the providers' lists at least this often.
constexpr auto kRefreshInterval = std::chrono::milliseconds(1000);

}  // namespace

ProvisionerService::ProvisionerService(const Clock* clock,
                                       std::map<std::string, scheduler::ProvisionerConfig> pools,
                                       std::map<std::string, std::unique_ptr<Provider>> providers)
    : clock_(clock), pools_(std::move(pools)), providers_(std::move(providers)) {}

ProvisionerService::~ProvisionerService() { Stop(); }

bool ProvisionerService::Provisions(const std::string& pool) const {
  auto it = pools_.find(pool);
  return it != pools_.end() && providers_.count(it->second.type) > 0;
}

Status ProvisionerService::Start() {
  for (const auto& [pool, config] : pools_) {
    if (!providers_.count(config.type)) {
      spdlog::warn("resource pool {}: provider type {} is not available here; the pool is static",
                   pool, config.type);
    }
  }
  RunActions();  // re-finds the agents of a previous master
  {
    MutexLock lock(&mu_);
    for (const auto& [id, a] : agents_) {
      if (!a.stopping) spdlog::info("provisioner: re-found agent {} of pool {}", id, a.pool);
    }
  }
  worker_ = std::thread([this] { WorkerLoop(); });
  return Status::Ok();
}

void ProvisionerService::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::string ProvisionerService::NextAgentIdLocked(const std::string& pool) {
  // The smallest free index: ids are reused, so the agent list stays as long as the pool. Ids
  // name files and Slurm jobs: characters other than [A-Za-z0-9._-] of the pool become '-'.
  std::string prefix = pool;
  for (char& c : prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  }
  for (int n = 1;; ++n) {
    std::string id = prefix + "-agent-" + std::to_string(n);
    if (!agents_.count(id)) return id;
  }
}

std::vector<std::string> ProvisionerService::Tick(const TickInput& input) {
  MutexLock lock(&mu_);
  int64_t now = NowMs();
  bool queued = false;
  for (const auto& [pool, config] : pools_) {
    if (!providers_.count(config.type)) continue;
    scheduler::ScalingInput in;
    in.now_ms = now;
    auto demand = input.pools.find(pool);
    if (demand != input.pools.end()) {
      in.waiting_slots = demand->second.waiting_slots;
      in.waiting_tasks = demand->second.waiting_tasks;
      in.free_slots = demand->second.free_slots;
    }
    for (auto& [id, a] : agents_) {
      if (a.pool != pool || a.stopping) continue;
      auto usage = input.agents.find(id);
      bool connected = usage != input.agents.end() && usage->second.connected;
      if (connected) a.registered = true;
      if (connected && !usage->second.busy) {
        if (!a.idle_since_ms) a.idle_since_ms = now;
      } else {
        a.idle_since_ms.reset();
      }
      // A lost agent (registered once, not connected now) is neither starting nor idle: it
      // counts against max_instances until its provider says it is gone.
      in.agents.push_back({id, a.registered, a.launched_at_ms, a.idle_since_ms});
    }
    scheduler::ScalingDecision d = scheduler::DecideScaling(config, in);
    for (const std::string& id : d.stop) {
      Agent& a = agents_.at(id);
      a.stopping = true;
      spdlog::info("provisioner: stopping agent {} of pool {} ({})", id, pool,
                   a.registered ? "idle" : "did not register in time");
      actions_.push_back({false, config.type, {id, pool, config.slots_per_agent, now}});
      queued = true;
    }
    if (d.launch > 0) {
      auto backoff = launch_backoff_until_ms_.find(pool);
      if (backoff != launch_backoff_until_ms_.end() && now < backoff->second) continue;
      spdlog::info("provisioner: launching {} agent(s) for pool {} ({} slot(s) waiting)", d.launch,
                   pool, in.waiting_slots);
    }
    for (int i = 0; i < d.launch; ++i) {
      std::string id = NextAgentIdLocked(pool);
      Agent a;
      a.pool = pool;
      a.launched_at_ms = now;
      agents_[id] = a;
      actions_.push_back({true, config.type, {id, pool, config.slots_per_agent, now}});
      queued = true;
    }
  }
  if (queued) cv_.notify_all();
  std::vector<std::string> gone;
  gone.swap(gone_);
  return gone;
}

void ProvisionerService::RunActions() {
  std::deque<Action> todo;
  {
    MutexLock lock(&mu_);
    todo.swap(actions_);
  }
  for (const Action& action : todo) {
    Provider* provider = providers_.at(action.type).get();
    const std::string& id = action.spec.agent_id;
    if (action.launch) {
      Status st = provider->Launch(action.spec);
      MutexLock lock(&mu_);
      auto it = agents_.find(id);
      if (st.ok()) {
        if (it != agents_.end()) it->second.launched = true;
        continue;
      }
      spdlog::error("provisioner: cannot launch agent {} for pool {}: {}", id, action.spec.pool,
                    st.ToString());
      if (it != agents_.end()) agents_.erase(it);
      launch_backoff_until_ms_[action.spec.pool] = NowMs() + kLaunchBackoffMs;
    } else {
      Status st = provider->Stop(id);
      if (!st.ok()) spdlog::error("provisioner: cannot stop agent {}: {}", id, st.ToString());
    }
  }
  // Reconcile with what the providers say exists.
  for (const auto& [type, provider] : providers_) {
    Result<std::vector<Provider::Instance>> listed = provider->List();
    if (!listed.ok()) {
      spdlog::warn("provisioner: cannot list the {} provider's agents: {}", type,
                   listed.status().ToString());
      continue;
    }
    std::set<std::string> present;
    MutexLock lock(&mu_);
    for (const Provider::Instance& inst : *listed) {
      present.insert(inst.agent_id);
      if (agents_.count(inst.agent_id)) continue;
      auto pool = pools_.find(inst.pool);
      if (pool == pools_.end() || pool->second.type != type) {
        // A pool no longer provisioned by this provider (the config changed): end the agent.
        Agent a;
        a.pool = inst.pool;
        a.launched = true;
        a.stopping = true;
        agents_[inst.agent_id] = a;
        actions_.push_back({false, type, {inst.agent_id, inst.pool, 0, NowMs()}});
        continue;
      }
      // Re-found (a master restart): it gets a fresh starting period to re-register.
      Agent a;
      a.pool = inst.pool;
      a.launched_at_ms = NowMs();
      a.launched = true;
      agents_[inst.agent_id] = a;
    }
    for (auto it = agents_.begin(); it != agents_.end();) {
      auto pool = pools_.find(it->second.pool);
      bool this_provider = pool != pools_.end() ? pool->second.type == type : it->second.stopping;
      if (this_provider && it->second.launched && !present.count(it->first)) {
        spdlog::info("provisioner: agent {} of pool {} is gone", it->first, it->second.pool);
        gone_.push_back(it->first);
        it = agents_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void ProvisionerService::WorkerLoop() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    if (actions_.empty()) {
      cv_.wait_for(mu_, kRefreshInterval);
      if (stopping_) break;
    }
    lock.Unlock();
    RunActions();
    lock.Lock();
  }
}

bool ProvisionerService::Stopping(const std::string& agent_id) const {
  MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  return it != agents_.end() && it->second.stopping;
}

ProvisionerService::PoolStatus ProvisionerService::StatusOf(const std::string& pool) const {
  MutexLock lock(&mu_);
  PoolStatus s;
  for (const auto& [id, a] : agents_) {
    if (a.pool != pool) continue;
    if (a.stopping) {
      ++s.stopping;
    } else if (a.registered) {
      ++s.running;
    } else {
      ++s.starting;
    }
  }
  return s;
}

}  // namespace det::master::server
