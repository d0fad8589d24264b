// ExperimentService: creating trials in batches. A searcher's creations are staged, stored in one
// transaction, and only then published to the runtime with the allocations that queue them; a
// new experiment is staged and stored off the loop (its first searcher snapshot queued there
// too), and published on the loop in slices, so creating a search of 20,000 trials holds the
// loop for one slice at a time.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "master/core/lifecycle.h"
#include "master/searcher/journaled_searcher.h"
#include "master/server/experiment_service.h"
#include "master/server/checkpoint_service.h"
#include "master/server/webhook_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

Status ExperimentService::StageCreated(ExperimentRuntime& exp, const core::Decision& d,
                                       StagedTrials* staged) {
  staged->entries.reserve(staged->entries.size() + d.created.size());
  staged->by_request.reserve(staged->by_request.size() + d.created.size());
  const int64_t now = Now();
  for (const searcher::CreateAction& create : d.created) {
    const core::Trial* decided = exp.core->Find(create.request_id);
    if (decided == nullptr) return Internal("created trial " + create.request_id + " not held");
    StagedTrials::Entry entry;
    store::TrialRow& row = entry.row;
    row.experiment_id = exp.id;
    row.request_id = create.request_id;
    row.seed = create.trial_seed;
    row.hparams = create.hparams;
    row.state = std::string(core::RunStateName(decided->state));
    row.start_time = now;
    if (core::IsTerminal(decided->state)) row.end_time = now;
    row.task_id = std::to_string(exp.id) + "." + create.request_id;
    DET_ASSIGN_OR_RETURN(row.warm_start_checkpoint_uuid, WarmStartCheckpoint(exp, create));
    entry.trial = std::make_unique<TrialRuntime>();
    TrialRuntime& t = *entry.trial;
    t.request_id = create.request_id;
    t.decided = decided;
    t.experiment_id = exp.id;
    t.task_id = row.task_id;
    t.seed = row.seed;
    // t.hparams: moved from the row once it is stored (ApplyStaged).
    t.warm_start_checkpoint_uuid = row.warm_start_checkpoint_uuid;
    staged->by_request[create.request_id] = staged->entries.size();
    staged->entries.push_back(std::move(entry));
  }
  return Status::Ok();
}

Status ExperimentService::ApplyStaged(StagedTrials* staged, store::DecisionWrites extra,
                                      size_t begin, size_t end) {
  end = std::min(end, staged->entries.size());
  store::DecisionWrites& w = extra;
  w.new_trials.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) {
    StagedTrials::Entry& e = staged->entries[i];
    if (e.request) {
      e.trial->run_id += 1;  // its first run, queued when published
      e.queued = true;
      e.queued_at = Now();  // one read per trial: the queue keeps creation order
      e.row.run_id = e.trial->run_id;
      e.row.run_queued_at = e.queued_at;
    }
    w.new_trials.push_back(std::move(e.row));  // the entry keeps only its runtime record
  }
  if (w.empty()) return Status::Ok();
  Result<std::vector<int64_t>> ids = deps_.store->ApplyDecision(w);
  for (size_t i = begin; i < end; ++i) {
    StagedTrials::Entry& e = staged->entries[i];
    e.trial->hparams = std::move(w.new_trials[i - begin].hparams);  // moved, not copied
    if (!ids.ok()) {
      if (e.queued) e.trial->run_id -= 1;
      e.queued = false;
    } else {
      e.trial->id = (*ids)[i - begin];
    }
  }
  return ids.status();
}

bool ExperimentService::PublishStaged(ExperimentRuntime& exp, StagedTrials* staged,
                                      size_t limit) {
  // What the "Scheduling" lines need: the journal's writer formats them (20,000 rows cost
  // ~100 ms here).
  struct Line {
    int64_t trial_id, run_id;
    std::string task_id;
  };
  size_t end = staged->entries.size();
  if (limit < end - staged->published) end = staged->published + limit;
  std::vector<Line> lines;
  lines.reserve(end - staged->published);
  for (; staged->published < end; ++staged->published) {
    StagedTrials::Entry& e = staged->entries[staged->published];
    int64_t id = e.trial->id;
    TrialRuntime& t = *e.trial;
    exp.trial_by_request[t.request_id] = id;
    exp.records[t.request_id] = &t;
    trials_.emplace_hint(trials_.end(), id, std::move(e.trial));  // ids ascend
    std::unique_ptr<AllocationRuntime> alloc;
    if (e.queued) {
      alloc = NewAllocation(exp, t, e.queued_at);
      t.allocation_id = alloc->id;
      lines.push_back({id, t.run_id, t.task_id});
    }
    Publish(t, /*notify=*/false);
    if (alloc) deps_.allocations->Publish(std::move(alloc));
  }
  if (!lines.empty()) {
    // Stored by the journal's writer after this decision.
    deps_.searcher_journal->QueueTaskLogs(
        [lines = std::move(lines), exp_id = exp.id, at = Now()] {
          std::vector<store::TaskLogRow> rows;
          rows.reserve(lines.size());
          for (const Line& l : lines) {
            rows.push_back(TrialLogSink::RowAt(
                at, l.trial_id, l.task_id,
                SchedulingMessage(l.trial_id, exp_id,
                                  AllocationService::AllocationIdOf(l.task_id, l.run_id))));
          }
          return rows;
        });
  }
  if (staged->published < staged->entries.size()) return false;
  staged->entries.clear();
  staged->by_request.clear();
  staged->published = 0;
  return true;
}

void ExperimentService::PublishSlice(int64_t experiment_id) {
  auto it = publishing_.find(experiment_id);
  if (it == publishing_.end()) return;  // settled by a decision about the experiment
  auto exp = experiments_.find(experiment_id);
  if (exp == experiments_.end()) {
    publishing_.erase(it);
    return;
  }
  if (!PublishStaged(*exp->second, &it->second.staged, Slice())) {
    // Queued trials can be placed while the rest waits for its turn.
    deps_.allocations->RequestPass();
    deps_.loop->Post([this, experiment_id] {
      runtime_role.Assume();
      PublishSlice(experiment_id);
    });
    return;
  }
  EndPublication(experiment_id);
}

void ExperimentService::Settle(int64_t experiment_id) {
  SettleDecision(experiment_id);
  auto it = publishing_.find(experiment_id);
  if (it == publishing_.end()) return;
  PublishStaged(*experiments_.at(experiment_id), &it->second.staged);
  EndPublication(experiment_id);
}

void ExperimentService::EndPublication(int64_t experiment_id) {
  auto node = publishing_.extract(experiment_id);
  deps_.allocations->RequestPass();
  if (node.mapped().ended) node.mapped().ended();
}

Status ExperimentService::ActivateNewExperiment(std::unique_ptr<ExperimentRuntime> owned) {
  ExperimentRuntime& exp = *owned;
  auto t0 = std::chrono::steady_clock::now();
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t)
        .count();
  };
  // Nothing else sees the experiment yet: its first decision is made here, off the loop.
  DET_ASSIGN_OR_RETURN(core::Decision d, exp.core->Decide(core::Activate{}));
  if (!d.processes.empty() && d.processes.size() != d.created.size()) {
    return Internal("a new experiment's activation did more than queue its new trials");
  }
  StagedTrials staged;
  DET_RETURN_IF_ERROR(StageCreated(exp, d, &staged));
  for (const core::ProcessEffect& e : d.processes) {
    staged.entries[staged.by_request.at(e.request_id)].request = true;
  }
  int64_t staged_ms = ms_since(t0);
  // Stored in slices, so that a decision about another experiment on the loop waits for one
  // slice's transaction, not for all of them; the last slice carries the activation. Until it
  // is stored the experiment is PAUSED and not initialized, a state a restore already knows:
  // the trial rows stored before it are adopted, and the searcher replays their creation when
  // the experiment is activated (its request ids come from the config's seed).
  const size_t total = staged.entries.size();
  const size_t slice = Slice();
  size_t stored = 0;
  Status applied;
  do {
    size_t end = std::min(total, stored + slice);
    store::DecisionWrites w;
    if (end == total) {
      RunState to = d.experiment_to.value_or(RunState::kActive);
      std::optional<int64_t> end_time;
      if (core::IsTerminal(to)) end_time = Now();
      w.experiment_state =
          store::ExperimentStateWrite{exp.id, std::string(core::RunStateName(to)), end_time};
      double progress = to == RunState::kCompleted ? 1.0 : d.progress;
      w.experiment_progress = store::ExperimentProgressWrite{exp.id, progress};
      AddWebhookEvents(exp.id, exp.config.defaulted, exp.submission_time, to, end_time, &w);
    }
    bool webhook_events = !w.webhook_events.empty();
    applied = ApplyStaged(&staged, std::move(w), stored, end);
    if (applied.ok() && webhook_events) deps_.webhooks->Wake();
    if (applied.ok()) stored = end;
  } while (applied.ok() && stored < total);
  if (!applied.ok()) {
    // The activation was not stored: publish the experiment as created (PAUSED, its searcher
    // not yet asked), with the trials of the slices stored before (as a restore would), so it
    // can be activated again.
    Result<std::unique_ptr<searcher::Searcher>> fresh = searcher::Searcher::Create(exp.config);
    if (!fresh.ok()) return fresh.status();
    staged.entries.resize(stored);
    std::vector<core::Trial> kept;
    for (StagedTrials::Entry& e : staged.entries) {
      e.queued = false;  // no run is queued while the experiment is paused
      core::Trial& t = kept.emplace_back();
      t.request_id = e.trial->request_id;
      t.state = RunState::kActive;  // as its row says; replayed at activation
    }
    exp.core = std::make_unique<core::Experiment>(
        std::make_unique<searcher::JournaledSearcher>(std::move(fresh).value()),
        exp.core->rules(), RunState::kPaused, /*initialized=*/false, std::nullopt,
        std::move(kept));
    for (StagedTrials::Entry& e : staged.entries) e.trial->decided = exp.core->Find(e.trial->request_id);
    exp.searcher_dirty.clear();
    AdoptOffLoop(std::move(owned), std::move(staged));
    return applied;
  }
  exp.stored_progress = d.experiment_to == RunState::kCompleted ? 1.0 : d.progress;
  int64_t stored_ms = ms_since(t0);
  // The searcher state is complete. Its first full snapshot goes to the journal's writer
  // (which serializes a copy of the searcher, off every request's thread) before any later
  // change of the experiment, all of which is decided on the loop after the publishing posted
  // below.
  Status persisted = PersistSearcherState(exp);
  if (!persisted.ok()) {
    // The trial rows are stored and imply the creations: a restore replays them.
    spdlog::error("experiment {}: first searcher snapshot: {}", exp.id, persisted.ToString());
  }
  int64_t prepared_ms = ms_since(t0);
  spdlog::info("experiment {} {} -> {} with {} trials", exp.id,
               core::RunStateName(RunState::kPaused), core::RunStateName(exp.state()),
               staged.entries.size());
  // Readers see it queued at once; its runtime is published on the loop.
  deps_.view->PutExperiment(exp.id, exp.state());
  auto shared_exp = std::make_shared<std::unique_ptr<ExperimentRuntime>>(std::move(owned));
  auto shared_staged = std::make_shared<StagedTrials>(std::move(staged));
  // Answered now: the rows are stored (a restore replays the snapshot's part from them). The
  // publishing starts on the loop before any later request about the experiment, and a request
  // about it that comes before the last slice publishes the rest first (Settle).
  deps_.loop->Post([this, shared_exp, shared_staged, t0, ms_since, staged_ms, stored_ms,
                    prepared_ms] {
    runtime_role.Assume();
    int64_t id = (*shared_exp)->id;
    int64_t loop_ms = ms_since(t0);
    Adopt(std::move(*shared_exp));
    // Where a large creation spends its time; the request was answered once the rows were stored.
    auto timing = [=] {
      spdlog::info(
          "experiment {}: trials staged in {} ms, stored by {} ms, snapshot queued by {} ms "
          "(answered), on the loop from {} ms, published by {} ms",
          id, staged_ms, stored_ms, prepared_ms, loop_ms, ms_since(t0));
    };
    publishing_[id] = Publication{std::move(*shared_staged), timing};
    PublishSlice(id);
  });
  return Status::Ok();
}

}  // namespace det::master::server
