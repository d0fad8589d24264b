#include "master/slurm/agent_job.h"

#include <algorithm>
#include <sstream>

#include "common/shell_quote.h"

namespace det::master::slurm {

namespace {

constexpr char kMarker[] = "det-agent";

}  // namespace

std::string AgentJobComment(const std::string& master_url, int64_t launched_at_ms,
                            const std::string& pool) {
  return std::string(kMarker) + "|" + master_url + "|" + std::to_string(launched_at_ms) + "|" +
         pool;
}

std::vector<std::string> AgentSbatchArgs(const AgentJobRequest& r) {
  int slots = std::max(r.slots, 0);
  bool gpu = r.slot_type == "cuda";
  std::vector<std::string> a = {
      "--parsable", "--job-name=" + r.agent_id, "--nodes=1", "--ntasks=1",
      // A zero-slot agent (aux tasks only) still needs a CPU to run on.
      "--cpus-per-task=" + std::to_string(gpu ? 1 : std::max(slots, 1)),
      // Slurm must not requeue an agent by itself: the provisioner decides what runs.
      "--no-requeue", "--output=" + r.output,
      "--comment=" + AgentJobComment(r.master_url, r.launched_at_ms, r.pool)};
  if (!r.partition.empty()) a.push_back("--partition=" + r.partition);
  if (gpu && slots > 0) a.push_back("--gpus-per-node=" + std::to_string(slots));
  std::ostringstream cmd;
  // exec: the agent is the batch shell, so scancel --full --signal=TERM reaches it.
  cmd << "exec " << ShellQuote(r.agent_path) << " --master-url " << ShellQuote(r.master_url) << " --agent-id "
      << ShellQuote(r.agent_id) << " --resource-pool " << ShellQuote(r.pool) << " --slot-type "
      << (gpu ? "cuda" : "cpu") << " --slots " << slots << " --data-dir " << ShellQuote(r.data_dir);
  if (!r.agent_token_file.empty()) cmd << " --agent-token-file " << ShellQuote(r.agent_token_file);
  if (!r.master_cert_file.empty()) cmd << " --master-cert-file " << ShellQuote(r.master_cert_file);
  a.push_back("--wrap=" + cmd.str());
  return a;
}

std::vector<AgentJob> ParseAgentJobs(const std::string& text, const std::string& master_url) {
  std::vector<AgentJob> out;
  std::istringstream in(text);
  std::string line;
  const std::string prefix = std::string(kMarker) + "|" + master_url + "|";
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t a = line.find('|');
    size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    size_t c = b == std::string::npos ? b : line.find('|', b + 1);
    if (c == std::string::npos) continue;
    std::string comment = line.substr(c + 1);
    if (comment.rfind(prefix, 0) != 0) continue;
    std::string rest = comment.substr(prefix.size());
    size_t bar = rest.find('|');
    if (bar == std::string::npos) continue;
    AgentJob j;
    j.job_id = line.substr(0, a);
    j.state = line.substr(a + 1, b - a - 1);
    j.agent_id = line.substr(b + 1, c - b - 1);
    j.pool = rest.substr(bar + 1);
    try {
      j.launched_at_ms = std::stoll(rest.substr(0, bar));
    } catch (...) {
      continue;
    }
    if (j.job_id.empty() || j.job_id.find_first_not_of("0123456789") != std::string::npos ||
        j.agent_id.empty()) {
      continue;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace det::master::slurm
