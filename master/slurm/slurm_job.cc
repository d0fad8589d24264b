#include "master/slurm/slurm_job.h"

#include <algorithm>
#include <sstream>

#include "common/shell_quote.h"

namespace det::master::slurm {

namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

std::optional<int64_t> ToInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    size_t used = 0;
    int64_t v = std::stoll(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// GPUs in a sinfo %G field such as "gpu:4", "gpu:a100:2(S:0-1)" or "(null)".
int64_t GpusOf(const std::string& gres) {
  int64_t total = 0;
  for (const std::string& item : Split(gres, ',')) {
    if (item.rfind("gpu", 0) != 0) continue;
    std::string spec = item.substr(0, item.find('('));
    size_t colon = spec.rfind(':');
    if (colon == std::string::npos) continue;
    if (auto n = ToInt(spec.substr(colon + 1))) total += *n;
  }
  return total;
}

}  // namespace

Result<JobShape> ShapeJob(const JobRequest& r, const PartitionNodes& p) {
  const std::string what = "allocation " + r.allocation_id + " (" + std::to_string(r.slots) + " " +
                           r.slot_type + " slots) in partition " + r.partition;
  if (p.nodes <= 0) return FailedPrecondition(what + ": the partition has no nodes");
  bool gpu = r.slot_type != "cpu";
  int64_t per_node = gpu ? p.gpus_per_node : p.cpus_per_node;
  if (per_node <= 0) {
    return FailedPrecondition(what + ": its nodes have no " + (gpu ? "GPUs" : "CPUs"));
  }
  JobShape shape;
  int64_t slots = std::max<int64_t>(r.slots, 0);
  if (slots == 0) {
    // A zero-slot task still needs a CPU to run on.
    shape.nodes = 1;
    shape.slots_per_node = 0;
    shape.cpus_per_node = 1;
    return shape;
  }
  // The fewest nodes that hold the slots, and the slots spread evenly over them (the launchers
  // start the same number of workers on every node).
  int64_t nodes = (slots + per_node - 1) / per_node;
  while (nodes <= p.nodes && slots % nodes != 0) ++nodes;
  if (nodes > p.nodes || (r.single_node && nodes > 1)) {
    return FailedPrecondition(what + ": needs " + std::to_string(nodes) + " node(s) of " +
                              std::to_string(per_node) + " slots" +
                              (r.single_node ? " but resources.is_single_node is set" : "") +
                              "; the partition has " + std::to_string(p.nodes) + " node(s)");
  }
  shape.nodes = nodes;
  shape.slots_per_node = slots / nodes;
  shape.cpus_per_node = gpu ? 1 : shape.slots_per_node;
  return shape;
}

int NiceOf(int priority) { return std::clamp(priority, 0, 10000); }

std::vector<std::string> SbatchArgs(const JobRequest& r, const JobShape& shape) {
  std::vector<std::string> a = {"--parsable", "--job-name=" + r.name, "--partition=" + r.partition,
                                "--nodes=" + std::to_string(shape.nodes), "--ntasks-per-node=1",
                                "--cpus-per-task=" + std::to_string(shape.cpus_per_node),
                                "--nice=" + std::to_string(NiceOf(r.priority)),
                                "--chdir=" + r.work_dir, "--output=" + r.work_dir + "/slurm-%j.out",
                                // Slurm must not requeue by itself: a lost job is the master's
                                // to reschedule (as an infrastructure failure).
                                "--no-requeue",
                                "--comment=determined allocation " + r.allocation_id};
  if (r.slot_type != "cpu" && shape.slots_per_node > 0) {
    a.push_back("--gpus-per-node=" + std::to_string(shape.slots_per_node));
  }
  return a;
}

std::string BatchScript(const JobRequest& r, const JobShape& shape) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# Determined allocation " << r.allocation_id << ": one agent per node, serving this\n"
    << "# allocation only; it exits when the allocation does.\n"
    << "exec srun --ntasks-per-node=1 --kill-on-bad-exit=0 /bin/sh -c "
    << ShellQuote("exec \"$@\" --agent-id \"slurm-${SLURM_JOB_ID}-${SLURM_NODEID}\" --data-dir \"" +
             r.work_dir + "/node${SLURM_NODEID}\"")
    << " sh " << ShellQuote(r.agent_path) << " --master-url " << ShellQuote(r.master_url)
    << " --resource-pool " << ShellQuote(r.resource_pool) << " --slot-type "
    << (r.slot_type == "cpu" ? "cpu" : "cuda") << " --slots " << shape.slots_per_node
    << " --exit-after-allocation --warm-python false";
  if (!r.python.empty()) s << " --python " << ShellQuote(r.python);
  if (!r.harness_path.empty()) s << " --harness-path " << ShellQuote(r.harness_path);
  if (!r.agent_token_file.empty()) s << " --agent-token-file " << ShellQuote(r.agent_token_file);
  if (!r.master_cert_file.empty()) s << " --master-cert-file " << ShellQuote(r.master_cert_file);
  s << "\n";
  return s.str();
}

std::string AgentIdFor(const std::string& job_id, int64_t node_id) {
  return "slurm-" + job_id + "-" + std::to_string(node_id);
}

std::optional<std::pair<std::string, int64_t>> ParseAgentId(const std::string& agent_id) {
  if (agent_id.rfind("slurm-", 0) != 0) return std::nullopt;
  std::string rest = agent_id.substr(6);
  size_t dash = rest.rfind('-');
  if (dash == std::string::npos || dash == 0) return std::nullopt;
  std::string job = rest.substr(0, dash);
  if (!ToInt(job)) return std::nullopt;
  std::optional<int64_t> node = ToInt(rest.substr(dash + 1));
  if (!node || *node < 0) return std::nullopt;
  return std::make_pair(job, *node);
}

JobState ParseJobState(const std::string& t) {
  static const std::map<std::string, JobState> kStates = {
      {"PENDING", JobState::kPending},       {"CONFIGURING", JobState::kRunning},
      {"RUNNING", JobState::kRunning},       {"RESIZING", JobState::kRunning},
      {"SIGNALING", JobState::kRunning},     {"STAGE_OUT", JobState::kCompleting},
      {"SUSPENDED", JobState::kSuspended},   {"STOPPED", JobState::kSuspended},
      {"COMPLETING", JobState::kCompleting}, {"COMPLETED", JobState::kCompleted},
      {"FAILED", JobState::kFailed},         {"CANCELLED", JobState::kCancelled},
      {"TIMEOUT", JobState::kTimeout},       {"NODE_FAIL", JobState::kNodeFail},
      {"PREEMPTED", JobState::kPreempted},   {"BOOT_FAIL", JobState::kBootFail},
      {"DEADLINE", JobState::kDeadline},     {"OUT_OF_MEMORY", JobState::kOutOfMemory},
      {"REQUEUED", JobState::kPending},      {"REQUEUE_FED", JobState::kPending},
      {"REQUEUE_HOLD", JobState::kPending},  {"REVOKED", JobState::kCancelled},
      {"SPECIAL_EXIT", JobState::kFailed},
  };
  // sacct writes "CANCELLED by 0"; squeue's long names have no suffix.
  std::string word = t.substr(0, t.find(' '));
  auto it = kStates.find(word);
  return it == kStates.end() ? JobState::kUnknown : it->second;
}

bool IsFinal(JobState s) {
  switch (s) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
    case JobState::kUnknown:
      return false;
    default:
      return true;
  }
}

bool IsInfrastructureEnd(JobState s) {
  switch (s) {
    case JobState::kCancelled:
    case JobState::kTimeout:
    case JobState::kNodeFail:
    case JobState::kPreempted:
    case JobState::kBootFail:
    case JobState::kDeadline:
      return true;
    default:
      return false;
  }
}

std::vector<JobStatus> ParseSqueue(const std::string& text) {
  std::vector<JobStatus> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> f = Split(line, '|');
    if (f.size() < 8 || !ToInt(f[0])) continue;
    JobStatus j;
    j.job_id = f[0];
    j.state_text = f[1];
    j.state = ParseJobState(f[1]);
    j.reason = f[2];
    j.partition = f[3];
    j.nodes = ToInt(f[4]).value_or(0);
    j.priority = ToInt(f[5]).value_or(0);
    j.nice = ToInt(f[6]).value_or(0);
    // The name is last and may itself hold '|'.
    std::string name = f[7];
    for (size_t i = 8; i < f.size(); ++i) name += "|" + f[i];
    j.name = name;
    out.push_back(std::move(j));
  }
  return out;
}

std::map<std::string, PartitionNodes> ParseSinfo(const std::string& text) {
  std::map<std::string, PartitionNodes> out;
  std::map<std::string, std::vector<std::string>> seen;  // nodes counted once per partition
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = Split(line, '|');
    if (f.size() < 4) continue;
    std::string part = f[0];
    if (!part.empty() && part.back() == '*') part.pop_back();
    auto& nodes = seen[part];
    if (std::find(nodes.begin(), nodes.end(), f[1]) != nodes.end()) continue;
    nodes.push_back(f[1]);
    PartitionNodes& p = out[part];
    int64_t cpus = ToInt(f[2]).value_or(0);
    int64_t gpus = GpusOf(f[3]);
    // A job's nodes are alike here: the smallest node bounds what every node is asked for.
    p.cpus_per_node = p.nodes == 0 ? cpus : std::min(p.cpus_per_node, cpus);
    p.gpus_per_node = p.nodes == 0 ? gpus : std::min(p.gpus_per_node, gpus);
    p.nodes += 1;
  }
  return out;
}

std::string DescribePendingReason(const std::string& reason) {
  if (reason.empty() || reason == "None") return "";
  static const std::map<std::string, std::string> kText = {
      {"Resources", "waiting for resources"},
      {"Priority", "higher-priority jobs go first"},
      {"Dependency", "waiting for a dependency"},
      {"BeginTime", "waiting for its start time"},
      {"PartitionDown", "the partition is down"},
      {"PartitionInactive", "the partition is inactive"},
      {"PartitionNodeLimit", "the partition has too few nodes"},
      {"ReqNodeNotAvail", "requested nodes are not available"},
      {"JobHeldUser", "held by a user"},
      {"JobHeldAdmin", "held by an administrator"},
      {"QOSMaxJobsPerUserLimit", "QOS limit of jobs per user"},
      {"AssocMaxJobsLimit", "association job limit"},
      {"NodeDown", "a required node is down"},
  };
  auto it = kText.find(reason);
  return "Slurm: " + reason + (it == kText.end() ? "" : " (" + it->second + ")");
}

std::optional<int64_t> JobsAhead(const std::vector<JobStatus>& jobs, const std::string& job_id) {
  const JobStatus* me = nullptr;
  for (const auto& j : jobs) {
    if (j.job_id == job_id) me = &j;
  }
  if (me == nullptr || me->state != JobState::kPending) return std::nullopt;
  int64_t my_id = ToInt(me->job_id).value_or(0);
  int64_t ahead = 0;
  for (const auto& j : jobs) {
    if (j.job_id == me->job_id || j.state != JobState::kPending || j.partition != me->partition) {
      continue;
    }
    int64_t id = ToInt(j.job_id).value_or(0);
    if (j.priority > me->priority || (j.priority == me->priority && id < my_id)) ++ahead;
  }
  return ahead;
}

}  // namespace det::master::slurm
