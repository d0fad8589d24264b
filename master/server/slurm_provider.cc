#include "master/server/slurm_provider.h"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <utility>

namespace det::master::server {

namespace fs = std::filesystem;

namespace {

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

SlurmProvider::SlurmProvider(Options options,
                             std::map<std::string, scheduler::ProvisionerConfig::Slurm> pools,
                             const Clock* clock, Runner runner)
    : options_(std::move(options)),
      pools_(std::move(pools)),
      clock_(clock),
      runner_(std::move(runner)) {}

SlurmProvider::Runner SlurmProvider::ToolRunner() {
  return [](const scheduler::ProvisionerConfig::Slurm& pool,
            const std::vector<std::string>& argv) -> Result<ProcessResult> {
    std::map<std::string, std::string> env;
    const char* path = std::getenv("PATH");
    std::string p = path != nullptr ? path : "/usr/bin:/bin";
    if (!pool.path.empty()) p = pool.path + ":" + p;
    env["PATH"] = p;
    if (!pool.slurm_conf.empty()) env["SLURM_CONF"] = pool.slurm_conf;
    // stderr joins stdout so that a refusal (sbatch: error: ...) reaches the master's log.
    std::vector<std::string> sh = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1"};
    sh.insert(sh.end(), argv.begin(), argv.end());
    return RunProcess(sh, env);
  };
}

scheduler::ProvisionerConfig::Slurm SlurmProvider::PoolConfig(const std::string& pool) const {
  scheduler::ProvisionerConfig::Slurm c;
  auto it = pools_.find(pool);
  if (it != pools_.end()) c = it->second;
  if (c.agent_path.empty()) c.agent_path = options_.agent_binary;
  if (c.job_storage_root.empty()) c.job_storage_root = options_.root;
  if (c.master_url.empty()) c.master_url = options_.master_url;
  return c;
}

Result<ProcessResult> SlurmProvider::Run(const std::string& pool,
                                         const std::vector<std::string>& argv) {
  return runner_(PoolConfig(pool), argv);
}

Status SlurmProvider::Launch(const LaunchSpec& spec) {
  scheduler::ProvisionerConfig::Slurm pool = PoolConfig(spec.pool);
  if (pool.agent_path.empty()) {
    return FailedPrecondition(
        "no determined-agent binary next to the master (set the pool's "
        "provider.agent_path)");
  }
  slurm::AgentJobRequest r;
  r.agent_id = spec.agent_id;
  r.pool = spec.pool;
  r.slots = spec.slots;
  r.slot_type = pool.slot_type;
  r.partition = pool.partition;
  r.launched_at_ms = spec.launched_at_ms;
  r.agent_path = pool.agent_path;
  r.master_url = pool.master_url;
  r.data_dir = pool.job_storage_root + "/" + spec.agent_id;
  r.output = pool.job_storage_root + "/" + spec.agent_id + ".log";
  r.agent_token_file = options_.agent_token_file;
  r.master_cert_file = options_.master_cert_file;
  std::error_code ec;
  fs::create_directories(r.data_dir, ec);
  if (ec) return Internal("cannot create " + r.data_dir + ": " + ec.message());
  std::vector<std::string> argv = {"sbatch"};
  for (auto& a : slurm::AgentSbatchArgs(r)) argv.push_back(std::move(a));
  DET_ASSIGN_OR_RETURN(ProcessResult out, Run(spec.pool, argv));
  std::string text = Trimmed(out.stdout_text);
  // --parsable prints "<job id>" or "<job id>;<cluster>" as its last line.
  std::string job_id =
      text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  job_id = job_id.substr(0, job_id.find(';'));
  if (out.exit_code != 0 || job_id.empty() ||
      job_id.find_first_not_of("0123456789") != std::string::npos) {
    return Unavailable("sbatch refused agent " + spec.agent_id + ": " + text);
  }
  spdlog::info("provisioner: agent {} of pool {} is Slurm job {}{}", spec.agent_id, spec.pool,
               job_id, pool.partition.empty() ? "" : " (partition " + pool.partition + ")");
  kill_at_ms_.erase(spec.agent_id);
  return Status::Ok();
}

Result<std::vector<SlurmProvider::Job>> SlurmProvider::Jobs() {
  // One squeue per distinct Slurm (tools and config) among the pools.
  std::map<std::pair<std::string, std::string>, std::string> clusters;  // -> a pool using it
  for (const auto& [name, c] : pools_) clusters.emplace(std::make_pair(c.path, c.slurm_conf), name);
  std::vector<Job> out;
  std::set<std::string> urls;
  for (const auto& [name, c] : pools_) urls.insert(PoolConfig(name).master_url);
  for (const auto& [key, pool] : clusters) {
    DET_ASSIGN_OR_RETURN(ProcessResult r,
                         Run(pool, {"squeue", "-h", "-o", slurm::kAgentSqueueFormat}));
    if (r.exit_code != 0) return Unavailable("squeue failed: " + Trimmed(r.stdout_text));
    for (const std::string& url : urls) {
      for (auto& j : slurm::ParseAgentJobs(r.stdout_text, url)) out.push_back({std::move(j), pool});
    }
  }
  return out;
}

Status SlurmProvider::Stop(const std::string& agent_id) {
  DET_ASSIGN_OR_RETURN(std::vector<Job> jobs, Jobs());
  for (const auto& [j, tools] : jobs) {
    if (j.agent_id != agent_id) continue;
    // A pending job has no agent to tell: it is simply cancelled. A running one's agent gets
    // SIGTERM (--full: the batch shell is the agent) and ends its trials first.
    std::vector<std::string> argv = {"scancel"};
    if (j.state != "PENDING") argv.insert(argv.end(), {"--full", "--signal=TERM"});
    argv.push_back(j.job_id);
    auto r = Run(tools, argv);
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) {
      return Unavailable("scancel " + j.job_id + " (agent " + agent_id +
                         ") failed: " + Trimmed(r->stdout_text));
    }
  }
  if (!kill_at_ms_.count(agent_id)) kill_at_ms_[agent_id] = NowMs() + options_.grace_ms;
  return Status::Ok();
}

Result<std::vector<Provider::Instance>> SlurmProvider::List() {
  DET_ASSIGN_OR_RETURN(std::vector<Job> jobs, Jobs());
  std::vector<Instance> out;
  std::set<std::string> present;
  for (const auto& [j, tools] : jobs) {
    auto kill_at = kill_at_ms_.find(j.agent_id);
    if (kill_at != kill_at_ms_.end() && NowMs() >= kill_at->second && j.state != "COMPLETING") {
      spdlog::warn(
          "provisioner: agent {} (Slurm job {}) did not end within {} ms of SIGTERM; "
          "cancelling the job",
          j.agent_id, j.job_id, options_.grace_ms);
      (void)Run(tools, {"scancel", j.job_id});
      kill_at->second = INT64_MAX;  // once
    }
    if (!present.insert(j.agent_id).second) continue;
    Instance inst;
    inst.agent_id = j.agent_id;
    inst.pool = j.pool;
    inst.launched_at_ms = j.launched_at_ms;
    out.push_back(std::move(inst));
  }
  for (auto it = kill_at_ms_.begin(); it != kill_at_ms_.end();) {
    it = present.count(it->first) ? std::next(it) : kill_at_ms_.erase(it);
  }
  return out;
}

}  // namespace det::master::server
