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
  // A decision sees the experiment whole: the slices of an earlier one are stored first, and
  // after a refused slice the trials left behind follow the stored state.
  SettleDecision(exp.id);
  if (exp.follow_stored) {
    exp.follow_stored = false;
    Status followed = Decide(exp, core::Restored{});
    if (!followed.ok()) return followed;
  }
  Result<core::Decision> d = exp.core->Decide(event);
  if (!d.ok()) return d.status();  // a refusal: nothing changed, nothing is stored
  if (out != nullptr) *out = *d;
  return Carry(exp, *d, std::move(extra));
}

namespace {

// The stopping state a decision that ends the experiment is stored in until its last slice: a
// crash between two slices leaves a stopping experiment, whose restore ends the trials left.
RunState StoppingFor(RunState terminal) {
  switch (terminal) {
    case RunState::kCompleted:
      return RunState::kStoppingCompleted;
    case RunState::kError:
      return RunState::kStoppingError;
    default:
      return RunState::kStoppingCanceled;
  }
}

}  // namespace

Status ExperimentService::Carry(ExperimentRuntime& exp, const core::Decision& d,
                                store::DecisionWrites w) {
  const int64_t now = Now();

  // New trials: rows with their state after the decision (a move of one is in its row).
  StagedTrials staged;
  DET_RETURN_IF_ERROR(StageCreated(exp, d, &staged));

  // What the decision changes of each existing trial, in the order first touched.
  std::vector<TrialChange> changes;
  std::unordered_map<const TrialRuntime*, size_t> change_of;
  auto change_for = [&](TrialRuntime& t) -> size_t {
    auto [it, added] = change_of.emplace(&t, changes.size());
    if (added) changes.emplace_back().trial = &t;
    return it->second;
  };
  for (const core::TrialStateChange& m : d.moves) {
    if (staged.by_request.contains(m.request_id)) continue;
    TrialRuntime* t = TrialOf(exp, m.request_id);
    if (t == nullptr) return Internal("decision moves trial " + m.request_id + ", not stored");
    TrialChange& c = changes[change_for(*t)];
    c.to = m.to;
    if (core::IsTerminal(m.to)) {
      c.end = TrialChange::End::kSet;
    } else if (core::IsTerminal(m.from)) {
      c.end = TrialChange::End::kClear;
    }
  }
  for (const std::string& rid : d.restarts_changed) {
    if (staged.by_request.contains(rid)) continue;
    if (TrialRuntime* t = TrialOf(exp, rid)) changes[change_for(*t)].restarts = true;
  }
  std::vector<std::pair<size_t, core::ProcessEffect::Kind>> effects;  // in the order decided
  std::vector<bool> processing;  // by change: a process to stop or kill
  for (const core::ProcessEffect& e : d.processes) {
    if (auto s = staged.by_request.find(e.request_id); s != staged.by_request.end()) {
      if (e.kind == core::ProcessEffect::Kind::kRequest) staged.entries[s->second].request = true;
      continue;
    }
    TrialRuntime* t = TrialOf(exp, e.request_id);
    if (t == nullptr) return Internal("decision affects trial " + e.request_id + ", not stored");
    size_t i = change_for(*t);
    effects.emplace_back(i, e.kind);
    if (processing.size() < changes.size()) processing.resize(changes.size());
    if (e.kind == core::ProcessEffect::Kind::kStop || e.kind == core::ProcessEffect::Kind::kKill) {
      processing[i] = true;
    }
    if (e.kind != core::ProcessEffect::Kind::kRequest) continue;
    TrialChange& c = changes[i];
    c.request = true;
    // A restore queues the run that was queued before again (requeue_same_run_).
    if (auto again = requeue_same_run_.find(t->id); again != requeue_same_run_.end()) {
      c.same_run = true;
      c.queued_at = again->second;
    }
  }
  processing.resize(changes.size());

  // A decision over more trials than a slice is stored in slices, so that a decision about
  // another experiment waits for one slice's transaction: the first holds the experiment's
  // state, the trials with a process to stop or kill and a slice of the others; the rest follow
  // in loop tasks (ContinueDecision), and any later decision about the experiment stores them
  // first (SettleDecision). An ending experiment is stored as stopping until the last slice.
  const size_t slice = Slice();
  std::vector<size_t> slice_of(changes.size(), 0);  // 0: the first
  if (changes.size() > slice) {
    size_t others = 0, later = 0;
    for (size_t i = 0; i < changes.size(); ++i) {
      if (processing[i]) continue;
      if (others < slice) {
        ++others;
      } else {
        slice_of[i] = 1 + later++ / slice;
      }
    }
  }
  auto pending = std::make_shared<PendingDecision>();
  pending->decided_at = now;
  DecisionSlice first;
  std::vector<size_t> index_in(changes.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    size_t k = slice_of[i];
    if (k > pending->slices.size()) pending->slices.resize(k);
    DecisionSlice& into = k == 0 ? first : pending->slices[k - 1];
    index_in[i] = into.changes.size();
    into.changes.push_back(changes[i]);
  }
  for (const auto& [i, kind] : effects) {
    size_t k = slice_of[i];
    (k == 0 ? first : pending->slices[k - 1]).effects.emplace_back(index_in[i], kind);
  }
  const bool sliced = !pending->slices.empty();

  std::optional<RunState> shown = d.experiment_to;  // what is stored with the first slice
  if (d.experiment_to) {
    std::optional<int64_t> end_time;
    if (core::IsTerminal(*d.experiment_to)) end_time = now;
    store::DecisionWrites& at = sliced && end_time ? pending->last : w;
    if (sliced && end_time) {
      shown = StoppingFor(*d.experiment_to);
      w.experiment_state = store::ExperimentStateWrite{
          exp.id, std::string(core::RunStateName(*shown)), std::nullopt};
    }
    at.experiment_state = store::ExperimentStateWrite{
        exp.id, std::string(core::RunStateName(*d.experiment_to)), end_time};
    AddWebhookEvents(exp.id, exp.config.defaulted, exp.submission_time, *d.experiment_to,
                     end_time, &at);
  }
  double progress = d.experiment_to == RunState::kCompleted ? 1.0 : d.progress;
  if (progress != exp.stored_progress) {
    w.experiment_progress = store::ExperimentProgressWrite{exp.id, progress};
  }

  std::vector<std::unique_ptr<AllocationRuntime>> runs = StageSlice(exp, first, now, &w);
  bool webhook_events = !w.webhook_events.empty();
  std::vector<int64_t> logged;
  for (const store::TaskLogRow& l : w.logs) logged.push_back(l.trial_id);
  Status stored = ApplyStaged(&staged, std::move(w));
  if (!stored.ok()) {
    UnstageSlice(first);
    Recover(exp, stored);
    return stored;
  }
  exp.stored_progress = progress;
  for (int64_t trial_id : logged) deps_.logs->Notify(trial_id);
  if (webhook_events && deps_.webhooks != nullptr) deps_.webhooks->Wake();

  // Released in the order decided. An ended experiment's checkpoints are collected before
  // readers see it ended, so none listed then is deleted after.
  if (d.experiment_to) {
    if (!sliced && core::IsTerminal(*d.experiment_to)) CollectCheckpoints(exp);
    PublishJob(exp, shown);
    spdlog::info("experiment {} -> {}", exp.id, core::RunStateName(*shown));
  }
  PublishStaged(exp, &staged);
  for (const std::string& rid : d.searcher_changed) exp.searcher_dirty.insert(rid);
  pending->woken = d.woken;
  pending->persist = d.searcher_heard || !d.searcher_changed.empty();
  pending->terminal = d.experiment_to && core::IsTerminal(*d.experiment_to);
  if (!sliced) {
    ReleaseSlice(exp, first, std::move(runs));
    FinishDecision(exp, *pending, /*sliced=*/false);
    return Status::Ok();
  }
  spdlog::info("experiment {}: its other trials follow it to {} in slices of {}", exp.id,
               core::RunStateName(exp.state()), slice);
  deciding_[exp.id] = pending;
  ReleaseSlice(exp, first, std::move(runs));
  if (deciding_.contains(exp.id)) {
    deps_.allocations->RequestPass();
    deps_.loop->Post([this, id = exp.id] {
      runtime_role.Assume();
      ContinueDecision(id);
    });
  }
  return Status::Ok();
}

std::vector<std::unique_ptr<AllocationRuntime>> ExperimentService::StageSlice(
    const ExperimentRuntime& exp, const DecisionSlice& slice, int64_t decided_at,
    store::DecisionWrites* w) {
  const int64_t now = Now();
  std::vector<std::unique_ptr<AllocationRuntime>> runs(slice.changes.size());
  for (size_t i = 0; i < slice.changes.size(); ++i) {
    const TrialChange& c = slice.changes[i];
    TrialRuntime& t = *c.trial;
    if (c.request) {
      if (!c.same_run) t.run_id += 1;
      runs[i] = NewAllocation(exp, t, c.same_run && c.queued_at > 0 ? c.queued_at : now);
    }
    bool new_run = c.request && !c.same_run;
    if (!c.to && c.end == TrialChange::End::kKeep && !c.restarts && !new_run) continue;
    store::TrialRunWrite& tw =
        w->trials.emplace_back(store::TrialRunWrite{t.id, std::nullopt, t.run_id, t.restarts(),
                                                    std::nullopt});
    if (c.to) tw.state = std::string(core::RunStateName(*c.to));
    if (c.end == TrialChange::End::kSet) tw.end_time = decided_at;
    tw.clear_end_time = c.end == TrialChange::End::kClear;
    if (new_run) {
      tw.run_queued_at = now;
      w->logs.push_back(
          deps_.logs->Row(t.id, t.task_id, SchedulingMessage(t.id, exp.id, runs[i]->id)));
    }
  }
  return runs;
}

void ExperimentService::UnstageSlice(const DecisionSlice& slice) {
  for (const TrialChange& c : slice.changes) {
    if (c.request && !c.same_run) c.trial->run_id -= 1;
  }
}

void ExperimentService::ReleaseSlice(ExperimentRuntime& exp, const DecisionSlice& slice,
                                     std::vector<std::unique_ptr<AllocationRuntime>> runs) {
  for (const TrialChange& c : slice.changes) Publish(*c.trial, /*notify=*/false);
  std::vector<std::string> dropped;
  for (const auto& [i, kind] : slice.effects) {
    TrialRuntime& t = *slice.changes[i].trial;
    switch (kind) {
      case core::ProcessEffect::Kind::kRequest:
        if (!runs[i]) break;
        t.allocation_id = runs[i]->id;
        Publish(t, /*notify=*/false);
        deps_.allocations->Publish(std::move(runs[i]));
        break;
      case core::ProcessEffect::Kind::kDrop:
        if (!t.allocation_id.empty()) dropped.push_back(std::move(t.allocation_id));
        t.allocation_id.clear();
        break;
      case core::ProcessEffect::Kind::kStop:
      case core::ProcessEffect::Kind::kKill: {
        if (!dropped.empty()) {
          deps_.allocations->DropUnplaced(dropped);
          dropped.clear();
        }
        // A queued allocation ends here at once, and its end is decided (inside this call).
        std::string id = t.allocation_id;
        if (!id.empty()) deps_.allocations->Terminate(id, kind == core::ProcessEffect::Kind::kStop);
        break;
      }
    }
  }
  if (!dropped.empty()) deps_.allocations->DropUnplaced(dropped);
}

void ExperimentService::FinishDecision(ExperimentRuntime& exp, PendingDecision& p, bool sliced) {
  if (sliced) {
    spdlog::info("experiment {}: the last slice of its trials is done", exp.id);
    if (p.terminal) {
      CollectCheckpoints(exp);
      PublishJob(exp);
      spdlog::info("experiment {} -> {}", exp.id, core::RunStateName(exp.state()));
    }
  }
  if (p.persist) {
    Status persisted = PersistSnapshot(exp);
    if (!persisted.ok()) {
      // Its trial rows are stored and imply what the searcher was told; the next persist
      // writes the marks kept, and a restore replays the rest.
      spdlog::error("experiment {}: searcher journal: {}", exp.id, persisted.ToString());
    }
  }
  for (const std::string& rid : p.woken) {
    if (TrialRuntime* t = TrialOf(exp, rid)) NotifyTrial(t->id);
  }
}

void ExperimentService::CollectCheckpoints(const ExperimentRuntime& exp) {
  Status gc = deps_.checkpoints->CollectExperimentCheckpoints(exp.id);
  if (!gc.ok()) spdlog::error("checkpoint GC of experiment {}: {}", exp.id, gc.ToString());
}

bool ExperimentService::StoreNextSlice(int64_t experiment_id) {
  auto it = deciding_.find(experiment_id);
  if (it == deciding_.end()) return false;
  std::shared_ptr<PendingDecision> p = it->second;
  auto exp_it = experiments_.find(experiment_id);
  if (exp_it == experiments_.end() || p->slices.empty()) {
    deciding_.erase(it);
    return false;
  }
  ExperimentRuntime& exp = *exp_it->second;
  DecisionSlice slice = std::move(p->slices.front());
  p->slices.pop_front();
  const bool last = p->slices.empty();
  if (last) deciding_.erase(it);  // a decision its effects cause finds nothing left to store
  store::DecisionWrites w;
  std::vector<std::unique_ptr<AllocationRuntime>> runs = StageSlice(exp, slice, p->decided_at, &w);
  if (last) {
    w.experiment_state = std::move(p->last.experiment_state);
    w.webhook_events = std::move(p->last.webhook_events);
  }
  bool webhook_events = !w.webhook_events.empty();
  std::vector<int64_t> logged;
  for (const store::TaskLogRow& l : w.logs) logged.push_back(l.trial_id);
  StagedTrials none;
  Status stored = ApplyStaged(&none, std::move(w));
  if (!stored.ok()) {
    // As after a crash between two slices: the experiment's state is stored with the slices
    // before; the next decision about it makes the trials left follow (Restored).
    deciding_.erase(experiment_id);
    UnstageSlice(slice);
    Recover(exp, stored);
    exp.follow_stored = true;
    return false;
  }
  for (int64_t trial_id : logged) deps_.logs->Notify(trial_id);
  if (webhook_events && deps_.webhooks != nullptr) deps_.webhooks->Wake();
  ReleaseSlice(exp, slice, std::move(runs));
  if (last) FinishDecision(exp, *p, /*sliced=*/true);
  return deciding_.contains(experiment_id);
}

void ExperimentService::ContinueDecision(int64_t experiment_id) {
  if (!StoreNextSlice(experiment_id)) return;
  // Queued trials can be placed while the rest waits for its turn.
  deps_.allocations->RequestPass();
  deps_.loop->Post([this, experiment_id] {
    runtime_role.Assume();
    ContinueDecision(experiment_id);
  });
}

void ExperimentService::SettleDecision(int64_t experiment_id) {
  while (StoreNextSlice(experiment_id)) {
  }
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
  // What its journal has queued is read back too (the writer stores it asynchronously).
  Status flushed = deps_.searcher_journal->Flush();
  if (!flushed.ok()) spdlog::error("experiment {}: searcher journal: {}", exp.id, flushed.ToString());
  Result<store::ExperimentRow> row = deps_.store->GetExperiment(exp.id);
  if (row.ok()) {
    // GetExperiment leaves the searcher snapshot out.
    Result<std::string> text = deps_.store->GetExperimentSnapshotText(exp.id);
    if (!text.ok()) {
      row = Result<store::ExperimentRow>(text.status());
    } else {
      row->snapshot = json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (row->snapshot.is_discarded()) row->snapshot = json::object();
    }
  }
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
