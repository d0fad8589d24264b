// SqliteStore: the master's decisions, each written in one transaction (sched). A decision that
// creates 20,000 trials is one BEGIN .. COMMIT with one prepared statement per kind of row, so it
// costs one fsync instead of 60,000.

#include "master/store/decision_writes.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

Status BindAllocation(Statement& s, const AllocationRow& row) {
  s.Reset();
  s.Bind(1, row.allocation_id).Bind(2, row.task_id).Bind(3, row.trial_id).Bind(4, row.agent_id);
  s.Bind(5, row.state).Bind(6, row.token).Bind(7, row.slots).Bind(8, row.start_time);
  s.Bind(9, row.end_time).Bind(10, row.exit_code).Bind(11, row.exit_reason);
  s.Bind(12, row.resources.dump());
  return s.Run();
}

}  // namespace

Result<std::vector<int64_t>> SqliteStore::ApplyDecision(const DecisionWrites& writes) {
  std::vector<int64_t> ids;
  if (writes.empty()) return ids;
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    if (!writes.new_trials.empty()) {
      // On SQLite a RETURNING clause makes each INSERT keep a statement journal, which doubled
      // the cost of a 20,000-trial decision; the rowid is read back instead. PostgreSQL returns
      // the id in the same round trip.
      const bool returning = db_->dialect() == Dialect::kPostgres;
      DET_PREPARE(ins, std::string("INSERT INTO trials (experiment_id, request_id, seed, hparams, "
                                   "state, start_time, end_time, restarts, run_id, "
                                   "total_batches, runner_state, searcher_metric, task_id, "
                                   "metadata, warm_start_checkpoint_uuid, run_queued_at) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)") +
                           (returning ? " RETURNING id" : ""));
      ids.reserve(writes.new_trials.size());
      for (const TrialRow& row : writes.new_trials) {
        ins.Reset();
        ins.Bind(1, row.experiment_id).Bind(2, row.request_id).Bind(3, row.seed);
        ins.Bind(4, row.hparams.dump()).Bind(5, row.state).Bind(6, row.start_time);
        ins.Bind(7, row.end_time).Bind(8, row.restarts).Bind(9, row.run_id);
        ins.Bind(10, row.total_batches).Bind(11, row.runner_state).Bind(12, row.searcher_metric);
        ins.Bind(13, row.task_id).Bind(14, row.metadata.dump());
        ins.Bind(15, row.warm_start_checkpoint_uuid).Bind(16, row.run_queued_at);
        int64_t id = 0;
        if (returning) {
          DET_ASSIGN_OR_RETURN(bool inserted, ins.Step());
          if (!inserted) return Internal("insert trial: no id returned");
          id = ins.Int(0);
        } else {
          DET_RETURN_IF_ERROR(ins.Run());
          id = db_->LastInsertId();
        }
        ids.push_back(id);
      }
    }
    if (!writes.trials.empty()) {
      DET_PREPARE(upd,
                  "UPDATE trials SET state = COALESCE(?, state), run_id = ?, restarts = ?, "
                  "end_time = CASE WHEN ? = 1 THEN NULL ELSE COALESCE(?, end_time) END, "
                  "run_queued_at = COALESCE(?, run_queued_at) WHERE id = ?");
      for (const TrialRunWrite& t : writes.trials) {
        upd.Reset();
        upd.Bind(1, t.state).Bind(2, t.run_id).Bind(3, t.restarts);
        upd.Bind(4, static_cast<int64_t>(t.clear_end_time ? 1 : 0)).Bind(5, t.end_time);
        upd.Bind(6, t.run_queued_at).Bind(7, t.trial_id);
        DET_RETURN_IF_ERROR(upd.Run());
        if (db_->Changes() == 0) {
          return NotFound("trial " + std::to_string(t.trial_id) + " not found");
        }
      }
    }
    if (!writes.trial_metadata.empty()) {
      DET_PREPARE(meta, "UPDATE trials SET metadata = ? WHERE id = ?");
      for (const TrialMetadataWrite& m : writes.trial_metadata) {
        meta.Reset();
        DET_RETURN_IF_ERROR(meta.Bind(1, m.metadata.dump()).Bind(2, m.trial_id).Run());
        if (db_->Changes() == 0) {
          return NotFound("trial " + std::to_string(m.trial_id) + " not found");
        }
      }
    }
    if (!writes.searcher_metrics.empty()) {
      DET_PREPARE(m, "UPDATE trials SET searcher_metric = ? WHERE id = ?");
      for (const TrialSearcherMetricWrite& w : writes.searcher_metrics) {
        m.Reset();
        DET_RETURN_IF_ERROR(m.Bind(1, w.metric).Bind(2, w.trial_id).Run());
      }
    }
    if (!writes.runner_states.empty()) {
      DET_PREPARE(r, "UPDATE trials SET runner_state = ? WHERE id = ?");
      for (const TrialRunnerStateWrite& w : writes.runner_states) {
        r.Reset();
        DET_RETURN_IF_ERROR(r.Bind(1, w.runner_state).Bind(2, w.trial_id).Run());
        if (db_->Changes() == 0) {
          return NotFound("trial " + std::to_string(w.trial_id) + " not found");
        }
      }
    }
    if (writes.experiment_meta) {
      const ExperimentMetaWrite& e = *writes.experiment_meta;
      std::optional<std::string> config;
      if (e.config) config = e.config->dump();
      std::optional<int64_t> archived;
      if (e.archived) archived = *e.archived ? 1 : 0;
      DET_PREPARE(s,
                  "UPDATE experiments SET config = COALESCE(?, config), notes = COALESCE(?, "
                  "notes), archived = COALESCE(?, archived) WHERE id = ?");
      DET_RETURN_IF_ERROR(s.Bind(1, config).Bind(2, e.notes).Bind(3, archived).Bind(4, e.id).Run());
      if (db_->Changes() == 0) return NotFound("experiment " + std::to_string(e.id) + " not found");
    }
    if (!writes.allocations.empty()) {
      DET_PREPARE(upsert_alloc,
                  "INSERT INTO allocations (allocation_id, task_id, trial_id, agent_id, state, "
                  "token, slots, start_time, end_time, exit_code, exit_reason, resources) VALUES "
                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(allocation_id) DO UPDATE SET "
                  "token = excluded.token, agent_id = excluded.agent_id, state = "
                  "excluded.state, end_time = "
                  "excluded.end_time, exit_code = excluded.exit_code, exit_reason = "
                  "excluded.exit_reason, resources = excluded.resources");
      for (const AllocationRow& a : writes.allocations) {
        DET_RETURN_IF_ERROR(BindAllocation(upsert_alloc, a));
      }
      DET_RETURN_IF_ERROR(RecordTrialUsageLocked(writes.allocations));
    }
    if (writes.experiment_state) {
      DET_PREPARE(s, "UPDATE experiments SET state = ?, end_time = ? WHERE id = ?");
      const ExperimentStateWrite& e = *writes.experiment_state;
      DET_RETURN_IF_ERROR(s.Bind(1, e.state).Bind(2, e.end_time).Bind(3, e.id).Run());
    }
    if (writes.experiment_progress) {
      DET_PREPARE(s, "UPDATE experiments SET progress = ? WHERE id = ?");
      const ExperimentProgressWrite& p = *writes.experiment_progress;
      DET_RETURN_IF_ERROR(s.Bind(1, p.progress).Bind(2, p.id).Run());
    }
    if (!writes.logs.empty()) {
      DET_PREPARE(log,
                  "INSERT INTO task_logs (task_id, trial_id, allocation_id, agent_id, "
                  "container_id, rank_id, timestamp, level, stdtype, source, log) VALUES "
                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      for (const TaskLogRow& r : writes.logs) {
        log.Reset();
        log.Bind(1, r.task_id).Bind(2, r.trial_id).Bind(3, r.allocation_id).Bind(4, r.agent_id);
        log.Bind(5, r.container_id).Bind(6, r.rank_id).Bind(7, r.timestamp).Bind(8, r.level);
        log.Bind(9, r.stdtype).Bind(10, r.source).Bind(11, r.log);
        DET_RETURN_IF_ERROR(log.Run());
      }
    }
    DET_RETURN_IF_ERROR(InsertWebhookEventsLocked(writes.webhook_events).status());
    return Status::Ok();
  };
  Status st = body();
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  DET_RETURN_IF_ERROR(Exec("COMMIT"));
  return ids;
}

}  // namespace det::master::store
