#pragma once
// CheckpointGcRunner: deletes checkpoint files through the GC task of the Python package
// (`python3 -m determined.exec.gc_checkpoints`), run on the master's host where the storage
// credentials of a local cluster are, then records in the store what is really gone.
//
// 1. Every request is persisted (gc_requests) before it runs and removed only after the task
//    reported every checkpoint DELETED, PARTIALLY_DELETED or UNCHANGED, so a master restart
//    resumes it.
// 2. Deletes are idempotent (files already gone are fine); a failed request is retried with
//    exponential backoff (1 s doubling to 5 min), forever.
// 3. A checkpoint becomes DELETED / PARTIALLY_DELETED only from the task's report.
// Thread-safe; one background thread runs requests one at a time.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

class CheckpointGcRunner {
 public:
  // Files are deleted only under `storage_roots` (unset: anywhere).
  CheckpointGcRunner(store::Store* store, const Clock* clock, std::string python,
                     std::string harness_dir,
                     std::optional<std::vector<std::string>> storage_roots = std::nullopt);
  ~CheckpointGcRunner();

  void Start();
  void Stop();
  // Refuses (before persisting anything) a uuid that is not a uuid and a file storage whose
  // directory is not inside the storage roots. Persists and schedules the deletion of `uuids`
  // (all their files, or those matching `globs`).
  // With `delete_experiment`, the experiment's rows are removed once its files are gone (also
  // when `uuids` is empty). With `delete_tensorboards`, the experiment's TensorBoard files go
  // too (deleting an experiment always deletes them).
  Status Submit(int64_t experiment_id, const nlohmann::json& storage_config,
                const std::vector<std::string>& uuids, const std::vector<std::string>& globs,
                bool delete_experiment = false, bool delete_tensorboards = false);
  // Blocks until no request is pending or `timeout_ms` passes; true when idle.
  bool WaitIdle(int64_t timeout_ms);

 private:
  void Loop();
  Status RunRequest(const store::GcRequestRow& request);
  Status CheckInsideStorage(const nlohmann::json& storage_config,
                            const std::vector<std::string>& uuids) const;

  store::Store* store_;
  const Clock* clock_;
  std::string python_;
  std::string harness_dir_;
  std::optional<std::vector<std::string>> storage_roots_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int64_t wake_generation_ = 0;
  std::thread thread_;
};

}  // namespace det::master::server
