// AllocationService: pools that grow. Each tick hands the provisioner (provisioner_service.h) the
// slots waiting per pool and what each agent does, and forgets the agents its providers ended.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "master/server/allocation_service.h"
#include "master/server/local_provider.h"
#include "master/server/master_config.h"
#include "master/server/provisioner_service.h"
#include "master/server/slurm_provider.h"

namespace det::master::server {

std::unique_ptr<ProvisionerService> MakeProvisioner(const MasterConfig& config,
                                                    const Clock* clock) {
  std::map<std::string, scheduler::ProvisionerConfig> pools;
  for (const scheduler::PoolConfig& p : config.pools.pools) {
    if (p.provider) pools[p.pool_name] = *p.provider;
  }
  if (pools.empty()) return nullptr;
  LocalProvider::Options local;
  local.agent_binary = LocalProvider::AgentBinaryNearExecutable();
  // Agents on this host reach a master listening on every address through loopback.
  std::string host = config.bind_address;
  if (host.empty() || host == "0.0.0.0" || host == "::") host = "127.0.0.1";
  // A master serving HTTPS (security.tls) is reached over https, verified with its own chain.
  local.master_url =
      (config.tls_cert.empty() ? "http://" : "https://") + host + ":" + std::to_string(config.port);
  local.agent_token_file = config.agent_token_file;
  if (!config.tls_cert.empty()) {
    std::error_code cert_ec;
    local.master_cert_file = std::filesystem::absolute(config.tls_cert, cert_ec).string();
  }
  std::error_code ec;
  local.root =
      std::filesystem::absolute(config.data_dir + "/provisioner", ec).lexically_normal().string();
  std::map<std::string, std::unique_ptr<Provider>> providers;
  std::map<std::string, scheduler::ProvisionerConfig::Slurm> slurm_pools;
  for (const auto& [name, p] : pools) {
    if (p.type == "slurm") slurm_pools[name] = p.slurm;
  }
  if (!slurm_pools.empty()) {
    // Defaults for what a pool's config leaves empty: the local provider's agent and URL (right
    // for a Slurm on this host; a cluster's pools set agent_path and master_url).
    SlurmProvider::Options slurm_options;
    slurm_options.master_url = local.master_url;
    slurm_options.agent_binary = local.agent_binary;
    slurm_options.agent_token_file = local.agent_token_file;
    slurm_options.master_cert_file = local.master_cert_file;
    slurm_options.root = std::filesystem::absolute(config.data_dir + "/provisioner-slurm", ec)
                             .lexically_normal()
                             .string();
    providers["slurm"] = std::make_unique<SlurmProvider>(
        std::move(slurm_options), std::move(slurm_pools), clock, SlurmProvider::ToolRunner());
  }
  providers["local"] = std::make_unique<LocalProvider>(std::move(local), clock);
  return std::make_unique<ProvisionerService>(clock, std::move(pools), std::move(providers));
}

std::string ProvisionerJobDetail(const ProvisionerService& service, const std::string& pool) {
  if (!service.Provisions(pool)) return "";
  ProvisionerService::PoolStatus status = service.StatusOf(pool);
  if (status.starting == 0) return "";
  return "waiting for " + std::to_string(status.starting) + " agent" +
         (status.starting == 1 ? "" : "s") + " to start";
}

void AllocationService::ProvisionerTick() {
  ProvisionerService* provisioner = deps_.provisioner;
  ProvisionerService::TickInput input;
  std::map<std::string, int> used_slots;  // by agent
  for (const auto& [id, a] : allocations_) {
    if (a->state == AllocationRuntime::State::kTerminated) continue;
    if (a->state == AllocationRuntime::State::kPending) {
      if (Held(*a)) continue;  // no demand while its experiment is paused or stopping
      std::string pool = PoolOf(*a);
      if (!provisioner->Provisions(pool)) continue;
      ProvisionerService::PoolDemand& d = input.pools[pool];
      d.waiting_slots += static_cast<int>(a->slots);
      d.waiting_tasks += 1;
      continue;
    }
    for (const auto& res : a->resources) {
      if (res.exited) continue;
      used_slots[res.agent_id] += static_cast<int>(res.slot_ids.size());
      input.agents[res.agent_id].busy = true;
    }
  }
  for (const AgentService::Agent& a : deps_.agents->List()) {
    ProvisionerService::AgentUsage& usage = input.agents[a.id];
    usage.connected = a.connected;
    if (!a.connected || !provisioner->Provisions(a.resource_pool)) continue;
    if (provisioner->Stopping(a.id)) continue;
    int free = static_cast<int>(a.slots.size()) - used_slots[a.id];
    if (free > 0) input.pools[a.resource_pool].free_slots += free;
  }
  for (const std::string& id : provisioner->Tick(input)) {
    // Its process is gone: what it still held is lost (as when an agent times out), and it
    // leaves the agent list.
    for (AllocationRuntime* alloc : OnAgent(id)) {
      KillResources(*alloc);
      Status st = HandleExit(*alloc, -1, "agent " + id + " was stopped", true);
      if (!st.ok()) spdlog::error("{}", st.ToString());
    }
    deps_.agents->Forget(id);
  }
}

}  // namespace det::master::server
