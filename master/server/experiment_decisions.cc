// ExperimentService: carrying out an experiment's decisions. core::Experiment::Decide makes
// each one (master/core/experiment.h); here its writes are stored in one transaction, and only
// then are its effects released: new trials published, processes queued, dropped, stopped or
// killed, long polls woken, the searcher journal told.
#include <spdlog/spdlog.h>

#include <unordered_map>
#include <unordered_set>

#include "master/searcher/journaled_searcher.h"
#include "master/server/checkpoint_service.h"
#include "master/server/experiment_service.h"
#include "master/server/webhook_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

core::ExperimentRules RulesOf(const config::ExperimentConfig& config, bool continued) {
  core::ExperimentRules rules;
  rules.max_restarts = config.max_restarts;
  rules.max_length = config.searcher.max_length ? config.searcher.max_length->value : 1;
  rules.continued = continued;
  return rules;
}

TrialRuntime* ExperimentService::TrialOf(const ExperimentRuntime& exp,
                                         const std::string& request_id) {
  auto it = exp.records.find(request_id);
  return it == exp.records.end() ? nullptr : it->second;
}

Status ExperimentService::Decide(ExperimentRuntime& exp, const core::ExperimentEvent& event,
                                 store::DecisionWrites extra, core::Decision* out) {
  Result<core::Decision> d = exp.core->Decide(event);
  if (!d.ok()) return d.status();  // a refusal: nothing changed, nothing is stored
  if (out != nullptr) *out = *d;
  return Carry(exp, *d, std::move(extra));
}

namespace {

// A run of an existing trial the decision queues, made before the writes and published after.
struct NewRun {
  TrialRuntime* trial;
  std::unique_ptr<AllocationRuntime> alloc;
  bool same_run;  // a restore queues the run that was queued before again
};

}  // namespace

Status ExperimentService::Carry(ExperimentRuntime& exp, const core::Decision& d,
                                store::DecisionWrites w) {
  const int64_t now = Now();
  if (d.experiment_to) {
    std::optional<int64_t> end_time;
    if (core::IsTerminal(*d.experiment_to)) end_time = now;
    w.experiment_state = store::ExperimentStateWrite{
        exp.id, std::string(core::RunStateName(*d.experiment_to)), end_time};
    AddWebhookEvents(exp.id, exp.config.defaulted, exp.submission_time, *d.experiment_to,
                     end_time, &w);
  }
  double progress = d.experiment_to == RunState::kCompleted ? 1.0 : d.progress;
  if (progress != exp.stored_progress) {
    w.experiment_progress = store::ExperimentProgressWrite{exp.id, progress};
  }

  // New trials: rows with their state after the decision (a move of one is in its row).
  StagedTrials staged;
  DET_RETURN_IF_ERROR(StageCreated(exp, d, &staged));

  // One write per existing trial the decision changes: its state, restarts and run.
  std::unordered_map<int64_t, size_t> write_of;
  std::vector<TrialRuntime*> changed;
  auto write_for = [&](TrialRuntime& t) -> store::TrialRunWrite& {
    auto [it, added] = write_of.emplace(t.id, w.trials.size());
    if (added) {
      w.trials.push_back({t.id, std::nullopt, t.run_id, t.restarts(), std::nullopt});
      changed.push_back(&t);
    }
    return w.trials[it->second];
  };
  for (const core::TrialStateChange& m : d.moves) {
    if (staged.by_request.contains(m.request_id)) continue;
    TrialRuntime* t = TrialOf(exp, m.request_id);
    if (t == nullptr) return Internal("decision moves trial " + m.request_id + ", not stored");
    store::TrialRunWrite& tw = write_for(*t);
    tw.state = std::string(core::RunStateName(m.to));
    if (core::IsTerminal(m.to)) {
      tw.end_time = now;
      tw.clear_end_time = false;
    } else if (core::IsTerminal(m.from)) {
      tw.end_time.reset();
      tw.clear_end_time = true;
    }
  }
  for (const std::string& rid : d.restarts_changed) {
    if (staged.by_request.contains(rid)) continue;
    if (TrialRuntime* t = TrialOf(exp, rid)) write_for(*t).restarts = t->restarts();
  }
  std::vector<NewRun> runs;
  for (const core::ProcessEffect& e : d.processes) {
    if (e.kind != core::ProcessEffect::Kind::kRequest) continue;
    if (auto s = staged.by_request.find(e.request_id); s != staged.by_request.end()) {
      staged.entries[s->second].request = true;
      continue;
    }
    TrialRuntime* t = TrialOf(exp, e.request_id);
    if (t == nullptr) return Internal("decision queues trial " + e.request_id + ", not stored");
    auto again = requeue_same_run_.find(t->id);
    bool same_run = again != requeue_same_run_.end();
    int64_t queued_at = same_run && again->second > 0 ? again->second : now;
    if (!same_run) t->run_id += 1;
    auto alloc = NewAllocation(exp, *t, queued_at);
    if (!same_run) {
      store::TrialRunWrite& tw = write_for(*t);
      tw.run_id = t->run_id;
      tw.run_queued_at = queued_at;
      w.logs.push_back(
          deps_.logs->Row(t->id, t->task_id, SchedulingMessage(t->id, exp.id, alloc->id)));
    }
    runs.push_back({t, std::move(alloc), same_run});
  }

  bool webhook_events = !w.webhook_events.empty();
  std::vector<int64_t> logged;
  for (const store::TaskLogRow& l : w.logs) logged.push_back(l.trial_id);
  Status stored = ApplyStaged(&staged, std::move(w));
  if (!stored.ok()) {
    for (NewRun& r : runs) {
      if (!r.same_run) r.trial->run_id -= 1;
    }
    Recover(exp, stored);
    return stored;
  }
  exp.stored_progress = progress;
  for (int64_t trial_id : logged) deps_.logs->Notify(trial_id);
  if (webhook_events && deps_.webhooks != nullptr) deps_.webhooks->Wake();

  // Released in the order decided.
  if (d.experiment_to) {
    PublishJob(exp);
    spdlog::info("experiment {} -> {}", exp.id, core::RunStateName(*d.experiment_to));
  }
  PublishStaged(exp, &staged);
  for (const std::string& rid : d.searcher_changed) exp.searcher_dirty.insert(rid);
  if (d.searcher_heard || !d.searcher_changed.empty()) {
    Status persisted = PersistSnapshot(exp);
    if (!persisted.ok()) {
      // Its trial rows are stored and imply what the searcher was told; the next persist
      // writes the marks kept, and a restore replays the rest.
      spdlog::error("experiment {}: searcher journal: {}", exp.id, persisted.ToString());
    }
  }
  for (TrialRuntime* t : changed) Publish(*t, /*notify=*/false);
  std::unordered_map<std::string, NewRun*> run_of;
  for (NewRun& r : runs) run_of[r.trial->request_id] = &r;
  std::vector<std::string> dropped;
  for (const core::ProcessEffect& e : d.processes) {
    TrialRuntime* t = TrialOf(exp, e.request_id);
    if (t == nullptr) continue;
    switch (e.kind) {
      case core::ProcessEffect::Kind::kRequest: {
        auto r = run_of.find(e.request_id);
        if (r == run_of.end() || !r->second->alloc) break;  // a new trial: queued when published
        t->allocation_id = r->second->alloc->id;
        Publish(*t, /*notify=*/false);
        deps_.allocations->Publish(std::move(r->second->alloc));
        break;
      }
      case core::ProcessEffect::Kind::kDrop:
        if (!t->allocation_id.empty()) dropped.push_back(std::move(t->allocation_id));
        t->allocation_id.clear();
        break;
      case core::ProcessEffect::Kind::kStop:
      case core::ProcessEffect::Kind::kKill: {
        if (!dropped.empty()) {
          deps_.allocations->DropUnplaced(dropped);
          dropped.clear();
        }
        // A queued allocation ends here at once, and its end is decided (inside this call).
        std::string id = t->allocation_id;
        if (!id.empty()) deps_.allocations->Terminate(id, e.kind == core::ProcessEffect::Kind::kStop);
        break;
      }
    }
  }
  if (!dropped.empty()) deps_.allocations->DropUnplaced(dropped);
  for (const std::string& rid : d.woken) {
    if (TrialRuntime* t = TrialOf(exp, rid)) NotifyTrial(t->id);
  }
  if (d.experiment_to && core::IsTerminal(*d.experiment_to)) {
    Status gc = deps_.checkpoints->CollectExperimentCheckpoints(exp.id);
    if (!gc.ok()) spdlog::error("checkpoint GC of experiment {}: {}", exp.id, gc.ToString());
  }
  return Status::Ok();
}

Result<std::unique_ptr<core::Experiment>> ExperimentService::LoadCore(
    const store::ExperimentRow& row, const config::ExperimentConfig& config,
    const std::vector<store::TrialRow>& trials,
    const std::map<int64_t, core::TrialPresence>& presence,
    std::optional<scheduler::QueuePosition>* queue_position) const {
  // The stored full snapshot with its journal merged in; the journal's searcher events are
  // replayed on the searcher restored from it.
  DET_ASSIGN_OR_RETURN(SearcherJournalService::Loaded journal,
                       deps_.searcher_journal->Load(row.id, row.snapshot));
  const json& snapshot = journal.snapshot;
  if (queue_position != nullptr && snapshot.contains("queue_position") &&
      snapshot["queue_position"].is_string()) {
    Result<scheduler::QueuePosition> pos =
        scheduler::QueuePosition::Parse(snapshot["queue_position"].get<std::string>());
    if (pos.ok()) *queue_position = *pos;
  }
  Result<std::unique_ptr<searcher::Searcher>> search =
      snapshot.contains("searcher") ? searcher::Searcher::Restore(config, snapshot["searcher"])
                                    : searcher::Searcher::Create(config);
  DET_RETURN_IF_ERROR(search.status());
  DET_RETURN_IF_ERROR(searcher::JournaledSearcher::Replay(**search, journal.events));
  std::optional<core::SearcherShutdown> shutdown;
  if (snapshot.contains("shutdown")) {
    shutdown = core::SearcherShutdown{snapshot["shutdown"].value("cancel", false),
                                      snapshot["shutdown"].value("failure", false)};
  }
  const json trial_snaps = snapshot.value("trials", json::object());
  std::vector<core::Trial> decided;
  decided.reserve(trials.size());
  for (const store::TrialRow& tr : trials) {
    core::Trial& t = decided.emplace_back();
    t.request_id = tr.request_id;
    t.state = core::ParseRunState(tr.state).value_or(RunState::kError);
    t.restarts = tr.restarts;
    if (trial_snaps.contains(tr.request_id)) {
      t.searcher = SearcherTrialState::FromJson(trial_snaps[tr.request_id]);
    }
    if (auto p = presence.find(tr.id); p != presence.end()) t.presence = p->second;
  }
  // A continued experiment's mark is not stored: after a restart it ends as its searcher says.
  bool continued = false;
  return std::make_unique<core::Experiment>(
      std::make_unique<searcher::JournaledSearcher>(std::move(search).value()),
      RulesOf(config, continued), core::ParseRunState(row.state).value_or(RunState::kError),
      snapshot.value("initialized", false), shutdown, std::move(decided));
}

void ExperimentService::Recover(ExperimentRuntime& exp, const Status& why) {
  spdlog::error("experiment {}: a decision's writes failed ({}); rebuilding it from the store",
                exp.id, why.ToString());
  Result<store::ExperimentRow> row = deps_.store->GetExperiment(exp.id);
  Result<std::vector<store::TrialRow>> rows =
      row.ok() ? deps_.store->ListTrials(exp.id) : Result<std::vector<store::TrialRow>>(row.status());
  std::map<int64_t, core::TrialPresence> presence;
  for (const auto& [rid, tid] : exp.trial_by_request) {
    const TrialRuntime& t = *trials_.at(tid);
    if (t.allocation_id.empty()) continue;
    presence[tid] = deps_.allocations->IsUnplaced(t.allocation_id) ? core::TrialPresence::kQueued
                                                                   : core::TrialPresence::kRunning;
  }
  deps_.searcher_journal->Forget(exp.id);
  Result<std::unique_ptr<core::Experiment>> core =
      rows.ok() ? LoadCore(*row, exp.config, *rows, presence)
                : Result<std::unique_ptr<core::Experiment>>(rows.status());
  if (!core.ok()) {
    // Nothing better is known: the next decision is made on what the core holds.
    spdlog::error("experiment {}: cannot rebuild it: {}", exp.id, core.status().ToString());
    return;
  }
  exp.core = std::move(core).value();
  exp.searcher_dirty.clear();
  for (auto& [rid, tid] : exp.trial_by_request) {
    TrialRuntime& t = *trials_.at(tid);
    t.decided = exp.core->Find(rid);
    Publish(t);
  }
  PublishJob(exp);
}

namespace {

// Persists an experiment's searcher state: `changed` may differ from what was persisted, `all`
// lists every trial (asked for when the journal has no mirror of the experiment).
Status PersistToJournal(SearcherJournalService* journal, int64_t experiment_id,
                        core::Experiment& core,
                        const std::optional<scheduler::QueuePosition>& queue_position,
                        SearcherJournalService::Trials changed,
                        const std::function<SearcherJournalService::Trials()>& all,
                        SearcherJournalService::Wait wait) {
  SearcherHeader header;
  header.initialized = core.initialized();
  if (core.shutdown()) {
    header.shutdown = searcher::ShutdownAction{core.shutdown()->cancel, core.shutdown()->failure};
  }
  if (queue_position) header.queue_position = queue_position->ToString();
  auto* journaled = dynamic_cast<searcher::JournaledSearcher*>(&core.journal_searcher());
  if (journaled == nullptr) return Internal("experiment searcher is not journaled");
  return journal->PersistChanged(experiment_id, *journaled, header, std::move(changed), all, wait);
}

SearcherJournalService::Trials EveryTrial(const core::Experiment& core) {
  SearcherJournalService::Trials every;
  every.reserve(core.trials().size());
  for (const core::Trial& t : core.trials()) every.emplace_back(t.request_id, t.searcher);
  return every;
}

}  // namespace

// Only the trials the decisions marked changed are diffed: O(changes).
Status ExperimentService::PersistSnapshot(ExperimentRuntime& exp) {
  SearcherJournalService::Trials changed;
  changed.reserve(exp.searcher_dirty.size());
  for (const std::string& rid : exp.searcher_dirty) {
    if (const core::Trial* t = exp.core->Find(rid)) changed.emplace_back(rid, t->searcher);
  }
  const core::Experiment& core = *exp.core;
  Status st = PersistToJournal(deps_.searcher_journal, exp.id, *exp.core, exp.queue_position,
                               std::move(changed), [&core] { return EveryTrial(core); },
                               SearcherJournalService::Wait::kAwaited);
  // On failure the marks stay: the next call reports them again (and the service, which has
  // dropped its mirror, writes a full snapshot from every trial anyway).
  if (st.ok()) exp.searcher_dirty.clear();
  return st;
}

// The experiment's first persist, before it is published: the journal (told to forget it)
// writes a full snapshot of every trial.
Status ExperimentService::PersistSearcherState(ExperimentRuntime& exp) {
  deps_.searcher_journal->Forget(exp.id);
  const core::Experiment& core = *exp.core;
  // Not awaited: the trial rows, stored first, imply it (a restore that finds rows its snapshot
  // does not know replays their creation), so a large search answers before it is written.
  Status st = PersistToJournal(deps_.searcher_journal, exp.id, *exp.core, exp.queue_position, {},
                               [&core] { return EveryTrial(core); },
                               SearcherJournalService::Wait::kNotAwaited);
  if (st.ok()) exp.searcher_dirty.clear();
  return st;
}

}  // namespace det::master::server
