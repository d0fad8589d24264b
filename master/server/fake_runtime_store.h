#pragma once
// FakeRuntimeStore: an in-memory store with what the runtime's services (experiments, trials,
// allocations, the searcher journal, trial logs) read and write, for unit tests without a
// database. It records every ApplyDecision batch, so a test can check that one decision was one
// transaction. Everything else answers Unimplemented (store::UnimplementedStore).

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "master/store/decision_writes.h"
#include "master/store/unimplemented_store.h"

namespace det::master::server {

class FakeRuntimeStore : public store::UnimplementedStore {
 public:
  // Every ApplyDecision batch applied so far, in order.
  std::vector<store::DecisionWrites> Decisions() {
    std::lock_guard<std::mutex> l(mu_);
    return decisions_;
  }
  std::vector<store::TaskLogRow> Logs() {
    std::lock_guard<std::mutex> l(mu_);
    return logs_;
  }
  // Makes the next ApplyDecision fail (a full disk, say) without applying anything; with
  // `after`, the one after `after` more succeed.
  void FailNextDecision(size_t after = 0) {
    std::lock_guard<std::mutex> l(mu_);
    fail_next_ = true;
    fail_after_ = after;
  }

  Result<store::UserRow> GetUserById(int64_t id) override {
    store::UserRow u;
    u.id = id;
    u.username = "user" + std::to_string(id);
    return u;
  }
  Status CreateSession(const std::string&, int64_t, int64_t) override { return Status::Ok(); }

  Result<int64_t> InsertExperiment(const store::ExperimentRow& row,
                                   const std::string& model_definition) override {
    std::lock_guard<std::mutex> l(mu_);
    store::ExperimentRow r = row;
    r.id = static_cast<int64_t>(experiments_.size()) + 1;
    snapshots_[r.id] = row.snapshot.is_null() ? "{}" : row.snapshot.dump();
    r.snapshot = nullptr;
    experiments_[r.id] = r;
    return r.id;
  }
  Result<store::ExperimentRow> GetExperiment(int64_t id) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = experiments_.find(id);
    if (it == experiments_.end()) return NotFound("experiment " + std::to_string(id));
    return it->second;
  }
  Result<std::vector<store::ExperimentRow>> ListNonTerminalExperiments() override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<store::ExperimentRow> out;
    for (const auto& [id, e] : experiments_) {
      if (e.state == "COMPLETED" || e.state == "CANCELED" || e.state == "ERROR") continue;
      store::ExperimentRow r = e;
      r.snapshot = nlohmann::json::parse(snapshots_[id]);
      out.push_back(std::move(r));
    }
    return out;
  }
  Result<std::string> GetModelDefinition(int64_t) override { return std::string(); }
  Result<int64_t> CountTrials(int64_t experiment_id) override {
    std::lock_guard<std::mutex> l(mu_);
    int64_t n = 0;
    for (const auto& [id, t] : trials_) n += t.experiment_id == experiment_id;
    return n;
  }
  Result<std::string> GetExperimentSnapshotText(int64_t id) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = snapshots_.find(id);
    if (it == snapshots_.end()) return NotFound("experiment " + std::to_string(id));
    return it->second;
  }
  Status WriteExperimentSnapshotText(int64_t id, const std::string& text) override {
    std::lock_guard<std::mutex> l(mu_);
    snapshots_[id] = text;
    events_.erase(id);
    return Status::Ok();
  }
  Status AppendSearcherEvent(int64_t experiment_id, int64_t seq,
                             const std::string& record) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!events_[experiment_id].emplace(seq, record).second) return AlreadyExists("seq taken");
    return Status::Ok();
  }
  Result<std::vector<std::pair<int64_t, std::string>>> ListSearcherEvents(
      int64_t experiment_id) override {
    std::lock_guard<std::mutex> l(mu_);
    const auto& records = events_[experiment_id];
    return std::vector<std::pair<int64_t, std::string>>(records.begin(), records.end());
  }

  Result<store::TrialRow> GetTrial(int64_t id) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = trials_.find(id);
    if (it == trials_.end()) return NotFound("trial " + std::to_string(id));
    return it->second;
  }
  Result<std::vector<store::TrialRow>> ListTrials(int64_t experiment_id) override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<store::TrialRow> out;
    for (const auto& [id, t] : trials_) {
      if (t.experiment_id == experiment_id) out.push_back(t);
    }
    return out;
  }

  Result<store::AllocationRow> GetAllocation(const std::string& id) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = allocations_.find(id);
    if (it == allocations_.end()) return NotFound("allocation " + id);
    return it->second;
  }
  Result<std::vector<store::AllocationRow>> ListOpenAllocations() override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<store::AllocationRow> out;
    for (const auto& [id, a] : allocations_) {
      if (!a.end_time) out.push_back(a);
    }
    return out;
  }
  Result<std::vector<std::string>> ListExperimentAllocationIds(int64_t experiment_id) override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    for (const auto& [id, a] : allocations_) {
      auto t = trials_.find(a.trial_id);
      if (t != trials_.end() && t->second.experiment_id == experiment_id) out.push_back(id);
    }
    return out;
  }
  Result<std::vector<store::CheckpointRow>> ListCheckpointsForTrial(int64_t) override {
    return std::vector<store::CheckpointRow>();
  }
  Result<std::vector<store::CheckpointRow>> ListCheckpointsForExperiment(int64_t) override {
    return std::vector<store::CheckpointRow>();
  }
  Result<std::vector<store::MetricRow>> ListMetrics(int64_t, const std::string&) override {
    return std::vector<store::MetricRow>();
  }
  Status AddTaskLogs(const std::vector<store::TaskLogRow>& rows) override {
    std::lock_guard<std::mutex> l(mu_);
    logs_.insert(logs_.end(), rows.begin(), rows.end());
    return Status::Ok();
  }

  Result<std::vector<int64_t>> ApplyDecision(const store::DecisionWrites& w) override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<int64_t> ids;
    if (w.empty()) return ids;
    if (fail_next_ && fail_after_ > 0) {
      --fail_after_;
    } else if (fail_next_) {
      fail_next_ = false;
      return Internal("the fake store refused the decision");
    }
    decisions_.push_back(w);
    for (store::TrialRow t : w.new_trials) {
      t.id = static_cast<int64_t>(trials_.size()) + 1;
      trials_[t.id] = t;
      ids.push_back(t.id);
    }
    for (const store::TrialRunWrite& tw : w.trials) {
      store::TrialRow& t = trials_[tw.trial_id];
      if (tw.state) t.state = *tw.state;
      t.run_id = tw.run_id;
      t.restarts = tw.restarts;
      if (tw.clear_end_time) t.end_time.reset();
      if (tw.end_time) t.end_time = tw.end_time;
      if (tw.run_queued_at) t.run_queued_at = *tw.run_queued_at;
    }
    for (const store::AllocationRow& a : w.allocations) allocations_[a.allocation_id] = a;
    if (w.experiment_state) {
      store::ExperimentRow& e = experiments_[w.experiment_state->id];
      e.state = w.experiment_state->state;
      e.end_time = w.experiment_state->end_time;
    }
    if (w.experiment_progress)
      experiments_[w.experiment_progress->id].progress = w.experiment_progress->progress;
    if (w.experiment_meta) {
      store::ExperimentRow& e = experiments_[w.experiment_meta->id];
      if (w.experiment_meta->config) e.config = *w.experiment_meta->config;
      if (w.experiment_meta->notes) e.notes = *w.experiment_meta->notes;
      if (w.experiment_meta->archived) e.archived = *w.experiment_meta->archived;
    }
    for (const auto& m : w.searcher_metrics) trials_[m.trial_id].searcher_metric = m.metric;
    for (const auto& r : w.runner_states) trials_[r.trial_id].runner_state = r.runner_state;
    for (const auto& m : w.trial_metadata) trials_[m.trial_id].metadata = m.metadata;
    logs_.insert(logs_.end(), w.logs.begin(), w.logs.end());
    return ids;
  }

 private:
  std::mutex mu_;
  std::map<int64_t, store::ExperimentRow> experiments_;
  std::map<int64_t, std::string> snapshots_;
  std::map<int64_t, std::map<int64_t, std::string>> events_;
  std::map<int64_t, store::TrialRow> trials_;
  std::map<std::string, store::AllocationRow> allocations_;
  std::vector<store::TaskLogRow> logs_;
  std::vector<store::DecisionWrites> decisions_;
  bool fail_next_ = false;
  size_t fail_after_ = 0;
};

}  // namespace det::master::server
