#include "master/server/slurm_service.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace det::master::server {

namespace {

namespace fs = std::filesystem;

// squeue must miss a job this many polls in a row before it counts as lost (sacct is asked
// first): one empty answer during a slurmctld restart is not a loss.
constexpr int64_t kMissingPollsForLost = 3;

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

SlurmService::Runner SlurmService::ToolRunner(const slurm::SlurmConfig& config) {
  std::map<std::string, std::string> env;
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "/usr/bin:/bin";
  if (!config.path.empty()) p = config.path + ":" + p;
  env["PATH"] = p;
  if (!config.slurm_conf.empty()) env["SLURM_CONF"] = config.slurm_conf;
  return [env](const std::vector<std::string>& argv) -> Result<ProcessResult> {
    // stderr joins stdout so that a refusal (sbatch: error: ...) reaches the trial's logs.
    std::vector<std::string> sh = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1"};
    sh.insert(sh.end(), argv.begin(), argv.end());
    return RunProcess(sh, env);
  };
}

SlurmService::SlurmService(slurm::SlurmConfig config, store::Store* store, const Clock* clock,
                           Runner runner)
    : config_(std::move(config)), store_(store), clock_(clock), runner_(std::move(runner)) {}

SlurmService::~SlurmService() { Stop(); }

Status SlurmService::Start(Listener listener) {
  listener_ = std::move(listener);
  DET_ASSIGN_OR_RETURN(std::vector<store::SlurmJobRow> rows, store_->ListOpenSlurmJobs());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& row : rows) {
      spdlog::info("slurm: re-adopting job {} of allocation {}", row.job_id, row.allocation_id);
      Tracked t;
      t.row = std::move(row);
      jobs_[t.row.allocation_id] = std::move(t);
    }
  }
  worker_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void SlurmService::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

bool SlurmService::Tracks(const std::string& allocation_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.count(allocation_id) > 0;
}

void SlurmService::Submit(slurm::JobRequest request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (jobs_.count(request.allocation_id)) return;
  Tracked t;
  t.row.allocation_id = request.allocation_id;
  t.row.pool = request.resource_pool;
  t.row.partition = request.partition;
  t.row.submitted_at = Now();
  jobs_[request.allocation_id] = std::move(t);
  ops_.push_back({Op::kSubmit, std::move(request), "", 0});
  cv_.notify_all();
}

void SlurmService::Forget(const std::string& allocation_id, int64_t grace_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(allocation_id);
  if (it == jobs_.end() || !it->second.live) return;
  it->second.live = false;
  it->second.cancel_after = Now() + grace_ms * 1000;
  poll_requested_ = true;
  cv_.notify_all();
}

void SlurmService::DeferExit(DeferredExit exit) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(exit.allocation_id);
  if (it == jobs_.end()) return;
  it->second.deferred = std::move(exit);
  poll_requested_ = true;
  cv_.notify_all();
}

void SlurmService::SetPriority(const std::string& allocation_id, int priority) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(allocation_id);
  if (it == jobs_.end() || it->second.row.job_id.empty()) return;
  ops_.push_back({Op::kNice, {}, it->second.row.job_id, slurm::NiceOf(priority)});
  cv_.notify_all();
}

void SlurmService::CancelJob(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_.push_back({Op::kCancel, {}, job_id, 0});
  cv_.notify_all();
}

std::optional<SlurmService::JobInfo> SlurmService::Job(const std::string& allocation_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(allocation_id);
  if (it == jobs_.end()) return std::nullopt;
  JobInfo info;
  info.job_id = it->second.row.job_id;
  info.nodes = it->second.row.nodes;
  info.status = it->second.status;
  if (!info.job_id.empty()) info.jobs_ahead = slurm::JobsAhead(last_squeue_, info.job_id);
  return info;
}

std::optional<std::pair<std::string, int64_t>> SlurmService::AllocationOfJob(
    const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, t] : jobs_) {
    if (t.row.job_id == job_id) return std::make_pair(id, t.row.nodes);
  }
  return std::nullopt;
}

void SlurmService::PollNow() { Poll(); }

Result<ProcessResult> SlurmService::Run(const std::vector<std::string>& argv) {
  return runner_(argv);
}

void SlurmService::Loop() {
  while (true) {
    std::deque<Op> ops;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(config_.poll_interval_ms),
                   [this] { return stop_ || !ops_.empty() || poll_requested_; });
      if (stop_) return;
      ops.swap(ops_);
      poll_requested_ = false;
    }
    for (const Op& op : ops) RunOp(op);
    Poll();
  }
}

Result<std::map<std::string, slurm::PartitionNodes>> SlurmService::Partitions() {
  DET_ASSIGN_OR_RETURN(ProcessResult r, Run({"sinfo", "-h", "-N", "-o", slurm::kSinfoFormat}));
  if (r.exit_code != 0) return Unavailable("sinfo failed: " + Trimmed(r.stdout_text));
  return slurm::ParseSinfo(r.stdout_text);
}

void SlurmService::RunOp(const Op& op) {
  if (op.kind == Op::kCancel) {
    auto r = Run({"scancel", op.job_id});
    if (!r.ok() || r->exit_code != 0) {
      spdlog::warn("slurm: scancel {} failed: {}", op.job_id,
                   r.ok() ? Trimmed(r->stdout_text) : r.status().ToString());
    }
    return;
  }
  if (op.kind == Op::kNice) {
    auto r = Run({"scontrol", "update", "JobId=" + op.job_id, "Nice=" + std::to_string(op.nice)});
    if (!r.ok() || r->exit_code != 0) {
      spdlog::warn("slurm: setting nice {} of job {} failed: {}", op.nice, op.job_id,
                   r.ok() ? Trimmed(r->stdout_text) : r.status().ToString());
    }
    return;
  }
  const slurm::JobRequest& req = op.request;
  auto fail = [&](const Status& st) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.erase(req.allocation_id);
    }
    spdlog::error("slurm: submitting allocation {}: {}", req.allocation_id, st.ToString());
    if (listener_.submit_failed) listener_.submit_failed(req.allocation_id, st);
  };
  auto parts = Partitions();
  if (!parts.ok()) return fail(parts.status());
  auto pit = parts->find(req.partition);
  if (pit == parts->end()) {
    std::string names;
    for (const auto& [n, p] : *parts) names += (names.empty() ? "" : ", ") + n;
    return fail(FailedPrecondition("Slurm has no partition '" + req.partition +
                                   "' (partitions: " + names + ")"));
  }
  auto shape = slurm::ShapeJob(req, pit->second);
  if (!shape.ok()) return fail(shape.status());
  std::error_code ec;
  fs::create_directories(req.work_dir, ec);
  if (ec) return fail(Internal("cannot create " + req.work_dir + ": " + ec.message()));
  std::string script = req.work_dir + "/job.sh";
  {
    std::ofstream out(script, std::ios::trunc);
    out << slurm::BatchScript(req, *shape);
    if (!out) return fail(Internal("cannot write " + script));
  }
  chmod(script.c_str(), 0700);
  std::vector<std::string> argv = {"sbatch"};
  for (auto& a : slurm::SbatchArgs(req, *shape)) argv.push_back(std::move(a));
  argv.push_back(script);
  auto r = Run(argv);
  if (!r.ok()) return fail(r.status());
  std::string out = Trimmed(r->stdout_text);
  // --parsable prints "<job id>" or "<job id>;<cluster>".
  std::string job_id = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  job_id = job_id.substr(0, job_id.find(';'));
  if (r->exit_code != 0 || job_id.empty() ||
      job_id.find_first_not_of("0123456789") != std::string::npos) {
    return fail(Unavailable("sbatch refused the job: " + out));
  }
  store::SlurmJobRow row;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(req.allocation_id);
    if (it == jobs_.end()) return;
    it->second.row.job_id = job_id;
    it->second.row.nodes = shape->nodes;
    row = it->second.row;
  }
  Status st = store_->UpsertSlurmJob(row);
  if (!st.ok()) {
    // Without the row a restarted master would not know the job: do not let it run.
    (void)Run({"scancel", job_id});
    return fail(st);
  }
  spdlog::info("slurm: allocation {} is job {} ({} node(s) of partition {})", req.allocation_id,
               job_id, shape->nodes, req.partition);
}

void SlurmService::Poll() {
  std::lock_guard<std::mutex> poll_lock(poll_mu_);
  std::set<std::string> partitions;
  std::set<std::string> deferred_before;  // a verdict needs an answer asked for after the exit
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, t] : jobs_) {
      if (t.row.job_id.empty()) continue;
      partitions.insert(t.row.partition);
      if (t.deferred) deferred_before.insert(id);
    }
  }
  if (partitions.empty()) return;
  std::string plist;
  for (const auto& p : partitions) plist += (plist.empty() ? "" : ",") + p;
  auto r = Run({"squeue", "-h", "--states=all", "-p", plist, "-o", slurm::kSqueueFormat});
  if (!r.ok() || r->exit_code != 0) {
    spdlog::warn("slurm: squeue failed: {}",
                 r.ok() ? Trimmed(r->stdout_text) : r.status().ToString());
    return;
  }
  std::vector<slurm::JobStatus> listed = slurm::ParseSqueue(r->stdout_text);
  std::map<std::string, slurm::JobStatus> by_id;
  for (const auto& j : listed) by_id[j.job_id] = j;

  // Jobs squeue has missed long enough: ask sacct (when accounting exists) before calling
  // them lost.
  std::vector<std::string> to_ask;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, t] : jobs_) {
      if (t.row.job_id.empty() || by_id.count(t.row.job_id)) continue;
      if (t.missing_polls + 1 >= kMissingPollsForLost) to_ask.push_back(t.row.job_id);
    }
  }
  for (const std::string& job_id : to_ask) {
    auto a = Run({"sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"});
    if (!a.ok() || a->exit_code != 0) continue;
    std::string line = Trimmed(a->stdout_text);
    size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    slurm::JobStatus s;
    s.job_id = job_id;
    s.state_text = line.substr(bar + 1);
    s.state = slurm::ParseJobState(s.state_text);
    if (slurm::IsFinal(s.state)) by_id[job_id] = s;
  }

  std::vector<std::function<void()>> calls;
  std::vector<store::SlurmJobRow> ended_rows;
  std::vector<std::string> cancels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_squeue_ = listed;
    int64_t now = Now();
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Tracked& t = it->second;
      const std::string id = it->first;
      if (t.row.job_id.empty()) {
        ++it;
        continue;
      }
      auto found = by_id.find(t.row.job_id);
      bool lost = false;
      if (found != by_id.end()) {
        t.missing_polls = 0;
        t.status = found->second;
      } else if (++t.missing_polls >= kMissingPollsForLost) {
        lost = true;
        slurm::JobStatus s;
        s.job_id = t.row.job_id;
        s.state = slurm::JobState::kUnknown;
        s.state_text = "LOST";
        t.status = s;
      }
      bool final = lost || (t.status && slurm::IsFinal(t.status->state));
      if (final) {
        slurm::JobStatus s = *t.status;
        if (t.deferred) {
          bool infra = lost || slurm::IsInfrastructureEnd(s.state);
          DeferredExit d = *t.deferred;
          std::string why = "Slurm job " + s.job_id + " ended " + s.state_text;
          calls.push_back([this, d, infra, why] { listener_.exit_verdict(d, infra, why); });
        } else if (t.live) {
          calls.push_back([this, id, s] { listener_.job_ended(id, s); });
        }
        store::SlurmJobRow row = t.row;
        row.ended = true;
        ended_rows.push_back(row);
        it = jobs_.erase(it);
        continue;
      }
      if (t.deferred && deferred_before.count(id) && t.status &&
          t.status->state != slurm::JobState::kCompleting) {
        // Still running after the exit: nobody cancelled the job; the exit is the trial's.
        DeferredExit d = *t.deferred;
        t.deferred.reset();
        calls.push_back([this, d] { listener_.exit_verdict(d, false, ""); });
      }
      if (!t.live && !t.cancel_sent && t.status &&
          (t.status->state == slurm::JobState::kPending || now >= t.cancel_after)) {
        t.cancel_sent = true;
        cancels.push_back(t.row.job_id);
      }
      ++it;
    }
  }
  for (const auto& row : ended_rows) {
    Status st = store_->UpsertSlurmJob(row);
    if (!st.ok()) spdlog::warn("slurm: recording the end of job {}: {}", row.job_id, st.ToString());
  }
  for (const auto& job_id : cancels) {
    spdlog::info("slurm: cancelling job {}", job_id);
    RunOp({Op::kCancel, {}, job_id, 0});
  }
  for (auto& call : calls) call();
}

}  // namespace det::master::server
