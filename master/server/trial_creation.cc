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
#include "master/server/webhook_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

Status ExperimentService::StageCreations(ExperimentRuntime& exp,
                                         std::deque<searcher::Action>& queue,
                                         StagedTrials* staged) {
  // At most one trial per queued action (a search's first batch is all creations).
  staged->entries.reserve(staged->entries.size() + queue.size());
  staged->by_request.reserve(staged->by_request.size() + queue.size());
  while (!queue.empty()) {
    if (auto* c = std::get_if<searcher::CreateAction>(&queue.front())) {
      searcher::CreateAction create = std::move(*c);
      queue.pop_front();
      if (exp.trial_by_request.count(create.request_id) ||
          staged->by_request.count(create.request_id)) {
        // Replayed after a restart: the trial row was stored but the snapshot that knew it was
        // not, so the restored searcher must still learn of the creation.
        for (auto& a : exp.searcher->TrialCreated(create.request_id)) queue.push_back(a);
        continue;
      }
      StagedTrials::Entry entry;
      store::TrialRow& row = entry.row;
      row.experiment_id = exp.id;
      row.request_id = create.request_id;
      row.seed = create.trial_seed;
      row.hparams = std::move(create.hparams);
      row.state = std::string(core::RunStateName(
          exp.state == RunState::kPaused ? RunState::kPaused : RunState::kActive));
      row.start_time = Now();
      row.task_id = std::to_string(exp.id) + "." + create.request_id;
      DET_ASSIGN_OR_RETURN(row.warm_start_checkpoint_uuid, WarmStartCheckpoint(exp, create));
      entry.trial = std::make_unique<TrialRuntime>(create.request_id, exp.searcher_dirty);
      entry.trial->experiment_id = exp.id;
      entry.trial->state = *core::ParseRunState(row.state);
      entry.trial->task_id = row.task_id;
      entry.trial->seed = row.seed;
      // entry.trial->hparams: moved from the row once it is stored (ApplyStaged).
      entry.trial->warm_start_checkpoint_uuid = row.warm_start_checkpoint_uuid;
      staged->by_request[create.request_id] = staged->entries.size();
      staged->entries.push_back(std::move(entry));
      for (auto& a : exp.searcher->TrialCreated(create.request_id)) queue.push_back(a);
    } else if (auto* v = std::get_if<searcher::ValidateAfterAction>(&queue.front())) {
      auto it = staged->by_request.find(v->request_id);
      if (it == staged->by_request.end()) return Status::Ok();  // an existing trial's
      staged->entries[it->second].trial->MutableSearcher().ops.push_back(v->length);
      queue.pop_front();
    } else {
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status ExperimentService::ApplyStaged(StagedTrials* staged, bool first_allocations,
                                      store::DecisionWrites extra, size_t begin, size_t end) {
  end = std::min(end, staged->entries.size());
  store::DecisionWrites& w = extra;
  w.new_trials.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) {
    StagedTrials::Entry& e = staged->entries[i];
    if (first_allocations && e.trial->state == RunState::kActive) {
      e.trial->run_id += 1;  // its first run, queued when published
      e.queued = true;
      e.queued_at = Now();  // one read per trial: the queue keeps creation order
      e.row.run_id = e.trial->run_id;
      e.row.run_queued_at = e.queued_at;
    }
    w.new_trials.push_back(std::move(e.row));  // the entry keeps only its runtime record
  }
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
                                      std::set<int64_t>* created, size_t limit) {
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
    trials_.emplace_hint(trials_.end(), id, std::move(e.trial));  // ids ascend
    std::unique_ptr<AllocationRuntime> alloc;
    if (e.queued) {
      alloc = NewAllocation(exp, t, e.queued_at);
      t.allocation_id = alloc->id;
      lines.push_back({id, t.run_id, t.task_id});
    }
    Publish(t, /*notify=*/false);
    if (alloc) deps_.allocations->Publish(std::move(alloc));
    if (created != nullptr) created->insert(id);
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
  if (!PublishStaged(*exp->second, &it->second.staged, nullptr, Slice())) {
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
  auto it = publishing_.find(experiment_id);
  if (it != publishing_.end()) {
    PublishStaged(*experiments_.at(experiment_id), &it->second.staged, nullptr);
    EndPublication(experiment_id);
  }
  if (moving_.erase(experiment_id) > 0) {
    auto exp = experiments_.find(experiment_id);
    if (exp == experiments_.end()) return;
    Status st = MoveRemainingTrials(*exp->second);
    if (!st.ok()) {
      spdlog::error("experiment {}: cannot move the rest of its trials: {}", experiment_id,
                    st.ToString());
      moving_.insert(experiment_id);
    }
  }
}

void ExperimentService::EndPublication(int64_t experiment_id) {
  auto node = publishing_.extract(experiment_id);
  deps_.allocations->RequestPass();
  Status st = MaybeFinishExperiment(*experiments_.at(experiment_id));
  if (!st.ok()) spdlog::error("publishing experiment {}: {}", experiment_id, st.ToString());
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
  exp.state = RunState::kActive;
  exp.initialized = true;
  std::vector<searcher::Action> initial = exp.searcher->InitialOperations();
  std::deque<searcher::Action> queue(std::make_move_iterator(initial.begin()),
                                     std::make_move_iterator(initial.end()));
  StagedTrials staged;
  DET_RETURN_IF_ERROR(StageCreations(exp, queue, &staged));
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
      w.experiment_state = store::ExperimentStateWrite{
          exp.id, std::string(core::RunStateName(RunState::kActive)), std::nullopt};
      w.experiment_progress = store::ExperimentProgressWrite{exp.id, exp.searcher->Progress()};
      AddWebhookEvents(exp.id, exp.config.defaulted, exp.submission_time, RunState::kActive,
                       std::nullopt, &w);
    }
    bool webhook_events = !w.webhook_events.empty();
    applied = ApplyStaged(&staged, /*first_allocations=*/true, std::move(w), stored, end);
    if (applied.ok() && webhook_events) deps_.webhooks->Wake();
    if (applied.ok()) stored = end;
  } while (applied.ok() && stored < total);
  if (!applied.ok()) {
    // The activation was not stored: publish the experiment as created (PAUSED, its searcher
    // not yet asked), with the trials of the slices stored before (as a restore would), so it
    // can be activated again.
    Result<std::unique_ptr<searcher::Searcher>> fresh = searcher::Searcher::Create(exp.config);
    if (fresh.ok()) {
      exp.searcher = std::make_unique<searcher::JournaledSearcher>(std::move(fresh).value());
    }
    exp.state = RunState::kPaused;
    exp.initialized = false;
    staged.entries.resize(stored);
    exp.searcher_dirty->clear();  // of trials never stored, too; the stored mark theirs again
    for (StagedTrials::Entry& e : staged.entries) {
      e.queued = false;  // no run is queued while the experiment is paused
      e.trial->MutableSearcher() = SearcherTrialState();  // replayed at activation
    }
    AdoptOffLoop(std::move(owned), std::move(staged));
    return applied;
  }
  int64_t stored_ms = ms_since(t0);
  if (queue.empty()) {
    // Nothing else to decide: the searcher state is complete. Its first full snapshot goes to
    // the journal's writer (which serializes a copy of the searcher, off every request's
    // thread) before any later change of the experiment, all of which is decided on the loop
    // after the publishing posted below.
    Status persisted = PersistSearcherState(exp, staged);
    if (!persisted.ok()) {
      // The trial rows are stored and imply the creations: a restore replays them.
      spdlog::error("experiment {}: first searcher snapshot: {}", exp.id, persisted.ToString());
    }
    exp.searcher_dirty->clear();
  }
  int64_t prepared_ms = ms_since(t0);
  spdlog::info("experiment {} {} -> {} with {} trials", exp.id,
               core::RunStateName(RunState::kPaused), core::RunStateName(RunState::kActive),
               staged.entries.size());
  // Readers see it queued at once; its runtime is published on the loop.
  deps_.view->PutExperiment(exp.id, RunState::kActive);
  auto shared_exp = std::make_shared<std::unique_ptr<ExperimentRuntime>>(std::move(owned));
  auto shared_staged = std::make_shared<StagedTrials>(std::move(staged));
  auto rest = std::make_shared<std::deque<searcher::Action>>(std::move(queue));
  auto publish = [this, shared_exp, shared_staged, rest, t0, ms_since, staged_ms, stored_ms,
                  prepared_ms]() -> Status {
    runtime_role.Assume();
    ExperimentRuntime& e = **shared_exp;
    int64_t id = e.id;
    int64_t loop_ms = ms_since(t0);
    Adopt(std::move(*shared_exp));
    // Where a large creation spends its time; the request was answered once the rows were stored.
    auto timing = [=] {
      spdlog::info(
          "experiment {}: trials staged in {} ms, stored by {} ms, snapshot queued by {} ms "
          "(answered), on the loop from {} ms, published by {} ms",
          id, staged_ms, stored_ms, prepared_ms, loop_ms, ms_since(t0));
    };
    if (rest->empty()) {
      publishing_[id] = Publication{std::move(*shared_staged), timing};
      PublishSlice(id);
      return Status::Ok();
    }
    PublishStaged(e, shared_staged.get(), nullptr);
    deps_.allocations->RequestPass();
    Status st = ProcessActions(e, std::vector<searcher::Action>(
                                      std::make_move_iterator(rest->begin()),
                                      std::make_move_iterator(rest->end())));
    timing();
    return st;
  };
  // What the searcher asked beyond creations is decided, and answered, on the loop.
  if (!rest->empty()) return deps_.loop->DecideAndWait(publish);
  // Answered now: the rows are stored (a restore replays the snapshot's part from them). The
  // publishing starts on the loop before any later request about the experiment, and a request
  // about it that comes before the last slice publishes the rest first (Settle).
  deps_.loop->Post([publish] { (void)publish(); });
  return Status::Ok();
}

}  // namespace det::master::server
