#include "master/server/checkpoint_gc_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "common/subprocess.h"
#include "master/config/storage_roots.h"
#include "master/core/uuid_check.h"
#include "master/server/checkpoint_paths.h"

namespace det::master::server {

using nlohmann::json;

namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

int64_t BackoffMillis(int64_t attempts) {
  int64_t ms = 1000;
  for (int64_t i = 1; i < attempts && ms < 300000; ++i) ms *= 2;
  return std::min<int64_t>(ms, 300000);
}

}  // namespace

CheckpointGcRunner::CheckpointGcRunner(store::Store* store, const Clock* clock, std::string python,
                                       std::string harness_dir,
                                       std::optional<std::vector<std::string>> storage_roots)
    : store_(store), clock_(clock), python_(std::move(python)),
      harness_dir_(std::move(harness_dir)), storage_roots_(std::move(storage_roots)) {}

Status CheckpointGcRunner::CheckInsideStorage(const json& storage_config,
                                              const std::vector<std::string>& uuids) const {
  for (const auto& uuid : uuids) DET_RETURN_IF_ERROR(core::CheckCheckpointUuid(uuid));
  if (config::StorageBaseDir(storage_config).empty()) return Status::Ok();  // object storage
  DET_RETURN_IF_ERROR(ResolvedStorageBase(storage_config, storage_roots_).status());
  for (const auto& uuid : uuids) {
    DET_RETURN_IF_ERROR(CheckpointDirectory(storage_config, storage_roots_, uuid).status());
  }
  return Status::Ok();
}

CheckpointGcRunner::~CheckpointGcRunner() { Stop(); }

void CheckpointGcRunner::Start() { thread_ = std::thread([this] { Loop(); }); }

void CheckpointGcRunner::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status CheckpointGcRunner::Submit(int64_t experiment_id, const json& storage_config,
                                  const std::vector<std::string>& uuids,
                                  const std::vector<std::string>& globs, bool delete_experiment,
                                  bool delete_tensorboards) {
  if (uuids.empty() && !delete_experiment && !delete_tensorboards) return Status::Ok();
  DET_RETURN_IF_ERROR(CheckInsideStorage(storage_config, uuids));
  store::GcRequestRow row;
  row.experiment_id = experiment_id;
  row.storage_config = storage_config;
  row.uuids = uuids;
  row.globs = globs;
  row.created_at = clock_->NowMicros();
  row.delete_experiment = delete_experiment;
  row.delete_tensorboards = delete_tensorboards;
  DET_RETURN_IF_ERROR(store_->AddGcRequest(row).status());
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wake_generation_;
  }
  cv_.notify_all();
  return Status::Ok();
}

bool CheckpointGcRunner::WaitIdle(int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    Result<std::vector<store::GcRequestRow>> pending = store_->ListGcRequests();
    if (pending.ok() && pending->empty()) return true;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return false;
}

void CheckpointGcRunner::Loop() {
  std::map<int64_t, std::chrono::steady_clock::time_point> not_before;
  while (true) {
    int64_t generation;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      generation = wake_generation_;
    }
    Result<std::vector<store::GcRequestRow>> pending = store_->ListGcRequests();
    auto next_wake = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    if (pending.ok()) {
      for (const auto& req : *pending) {
        auto now = std::chrono::steady_clock::now();
        auto it = not_before.find(req.id);
        if (it != not_before.end() && it->second > now) {
          next_wake = std::min(next_wake, it->second);
          continue;
        }
        Status st = RunRequest(req);
        if (st.ok()) {
          (void)store_->DeleteGcRequest(req.id);
          not_before.erase(req.id);
        } else {
          spdlog::warn("checkpoint GC for experiment {} failed (attempt {}), will retry: {}",
                       req.experiment_id, req.attempts + 1, st.message());
          (void)store_->UpdateGcRequestAttempt(req.id, st.message());
          not_before[req.id] = now + std::chrono::milliseconds(BackoffMillis(req.attempts + 1));
          next_wake = std::min(next_wake, not_before[req.id]);
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
      }
    }
    cv_.notify_all();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, next_wake, [&] { return stopping_ || wake_generation_ != generation; });
    if (stopping_) return;
  }
}

Status CheckpointGcRunner::RunRequest(const store::GcRequestRow& request) {
  if (request.uuids.empty() && !request.delete_experiment && !request.delete_tensorboards) {
    return Status::Ok();
  }
  // Again at every run: a request persisted by an older master, or a link a trial planted
  // since, must not make the task delete outside the storage.
  DET_RETURN_IF_ERROR(CheckInsideStorage(request.storage_config, request.uuids));
  std::vector<std::string> argv = {python_, "-m", "determined.exec.gc_checkpoints",
                                    "--storage-config", request.storage_config.dump(),
                                    "--delete", Join(request.uuids), "--experiment-id",
                                    std::to_string(request.experiment_id), "--no-report",
                                    // This runner retries failed requests with its own backoff
                                    // forever; one pass of the task should fail fast.
                                    "--attempts", "2", "--backoff", "0.2"};
  if (!request.globs.empty()) {
    argv.push_back("--globs");
    argv.push_back(Join(request.globs));
  }
  if (request.delete_experiment || request.delete_tensorboards) {
    // Deleting an experiment also removes its trials' TensorBoard files, which they upload
    // to <cluster id>/tensorboard/experiment/<id>/ in the checkpoint storage.
    DET_ASSIGN_OR_RETURN(std::string cluster_id, store_->GetOrCreateClusterId(""));
    argv.push_back("--delete-tensorboards");
    argv.push_back(cluster_id);
  }
  std::map<std::string, std::string> env;
  if (!harness_dir_.empty()) env["PYTHONPATH"] = harness_dir_;
  env["AWS_MAX_ATTEMPTS"] = "1";
  DET_ASSIGN_OR_RETURN(ProcessResult proc, RunProcess(argv, env));
  // The report is the last stdout line that is a JSON object with "checkpoints".
  json out;
  std::istringstream lines(proc.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("checkpoints")) out = std::move(j);
  }
  if (!out.is_object() || !out.contains("checkpoints")) {
    return Internal("GC task exited " + std::to_string(proc.exit_code) + " without a report");
  }
  std::string failures;
  for (const auto& c : out["checkpoints"]) {
    std::string uuid = c.value("uuid", "");
    std::string state = c.value("state", "");
    if (state == "FAILED") {
      failures += uuid + ": " + c.value("error", std::string("unknown error")) + "; ";
      continue;
    }
    if (state != "DELETED" && state != "PARTIALLY_DELETED") continue;
    Result<store::CheckpointRow> row = store_->GetCheckpoint(uuid);
    if (!row.ok()) continue;
    row->state = state;
    row->resources = c.value("resources", json::object());
    int64_t size = 0;
    for (auto& [k, v] : row->resources.items()) {
      if (v.is_string()) size += std::atoll(v.get<std::string>().c_str());
      if (v.is_number_integer()) size += v.get<int64_t>();
    }
    row->size = size;
    DET_RETURN_IF_ERROR(store_->AddCheckpoint(*row));
  }
  if (out.contains("tensorboards") && out["tensorboards"].is_object() &&
      out["tensorboards"].value("error", json()).is_string()) {
    failures += "tensorboard files: " + out["tensorboards"]["error"].get<std::string>() + "; ";
  }
  if (!failures.empty()) return Unavailable("some deletes failed: " + failures);
  if (request.delete_experiment) return store_->DeleteExperiment(request.experiment_id);
  return Status::Ok();
}

}  // namespace det::master::server
