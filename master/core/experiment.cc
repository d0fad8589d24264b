#include "master/core/experiment.h"

#include <algorithm>
#include <utility>

#include "master/core/experiment_moves.h"
#include "master/core/trial_searcher.h"

namespace det::master::core {

namespace {

using searcher::Action;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

std::string Name(RunState s) { return std::string(RunStateName(s)); }

// Clears `*flag` when the scope ends, whatever path leaves it.
class FlagScope {
 public:
  explicit FlagScope(bool* flag) : flag_(flag) { *flag_ = true; }
  ~FlagScope() { *flag_ = false; }
  FlagScope(const FlagScope&) = delete;
  FlagScope& operator=(const FlagScope&) = delete;

 private:
  bool* flag_;
};

}  // namespace

bool Decision::empty() const {
  return !experiment_to && created.empty() && moves.empty() && restarts_changed.empty() &&
         searcher_changed.empty() && !searcher_heard && processes.empty() && woken.empty();
}

Experiment::Experiment(std::unique_ptr<searcher::Searcher> searcher, ExperimentRules rules)
    : searcher_(std::move(searcher)), rules_(rules) {}

Experiment::Experiment(std::unique_ptr<searcher::Searcher> searcher, ExperimentRules rules,
                       RunState state, bool initialized, std::optional<SearcherShutdown> shutdown,
                       std::vector<Trial> trials)
    : searcher_(std::move(searcher)),
      rules_(rules),
      state_(state),
      initialized_(initialized),
      shutdown_(shutdown) {
  by_request_.reserve(trials.size());
  for (Trial& t : trials) {
    by_request_[t.request_id] = trials_.size();
    trials_.push_back(std::move(t));
  }
}

const Trial* Experiment::Find(const std::string& request_id) const {
  auto it = by_request_.find(request_id);
  return it == by_request_.end() ? nullptr : &trials_[it->second];
}

Trial* Experiment::MutableTrial(const std::string& request_id) {
  auto it = by_request_.find(request_id);
  return it == by_request_.end() ? nullptr : &trials_[it->second];
}

Result<OpAnswer> Experiment::Answer(const std::string& request_id) const {
  const Trial* t = Find(request_id);
  if (t == nullptr) return NotFound("trial " + request_id + " is not part of the experiment");
  return AnswerOperation(t->searcher, t->state, t->has_allocation());
}

Result<Decision> Experiment::Decide(const ExperimentEvent& event) {
  Decision d;
  out_ = &d;
  dirty_.clear();
  Status st = std::visit(Overloaded{
                             [this](const Activate&) { return OnActivate(); },
                             [this](const Pause&) { return OnPause(); },
                             [this](const Stop& e) { return OnStop(e); },
                             [this](const Placed& e) { return OnPlaced(e); },
                             [this](const CompleteOperation& e) { return OnComplete(e); },
                             [this](const ProcessExited& e) { return OnExit(e); },
                             [this](const EarlyExit& e) { return OnEarlyExit(e); },
                             [this](const KillTrial& e) { return OnKillTrial(e); },
                             [this](const ReportProgress& e) { return OnProgress(e); },
                             [this](const MetricsReported& e) { return OnMetrics(e); },
                             [this](const Restored&) { return OnRestored(); },
                             [this](const Continue& e) { return OnContinue(e); },
                         },
                         event);
  out_ = nullptr;
  if (!st.ok()) return st;
  // In creation order, so the writes (and a test) do not depend on hashing; O(changed), not
  // O(trials).
  std::vector<size_t> changed;
  changed.reserve(dirty_.size());
  for (const std::string& rid : dirty_) changed.push_back(by_request_.at(rid));
  std::sort(changed.begin(), changed.end());
  for (size_t i : changed) d.searcher_changed.push_back(trials_[i].request_id);
  d.progress = searcher_->Progress();
  return d;
}

// --- the experiment's own moves ------------------------------------------------------------

Status Experiment::OnActivate() {
  if (state_ == RunState::kActive) return Status::Ok();
  DET_RETURN_IF_ERROR(SetExperimentState(RunState::kActive));
  if (!initialized_) {
    initialized_ = true;
    out_->searcher_heard = true;  // the header's `initialized`
    DET_RETURN_IF_ERROR(ProcessActions(searcher_->InitialOperations()));
  }
  std::vector<Action> none;
  bool moved = false;
  DET_RETURN_IF_ERROR(MoveTrials(RunState::kActive, &none, &moved));
  return MaybeFinish();
}

Status Experiment::OnPause() {
  if (state_ == RunState::kPaused) return Status::Ok();
  DET_RETURN_IF_ERROR(SetExperimentState(RunState::kPaused));
  std::vector<Action> none;  // a pause tells the searcher nothing
  bool moved = false;
  return MoveTrials(RunState::kPaused, &none, &moved);
}

Status Experiment::OnStop(const Stop& e) {
  if (!IsStopping(e.stopping)) {
    return InvalidArgument("stop: " + Name(e.stopping) + " is not a stopping state");
  }
  bool graceful = e.stopping == RunState::kStoppingCanceled;
  if (IsTerminal(state_) || state_ == e.stopping ||
      (graceful && state_ == RunState::kStoppingKilled)) {
    return Status::Ok();  // ended, or ending already
  }
  DET_RETURN_IF_ERROR(SetExperimentState(e.stopping));
  DET_RETURN_IF_ERROR(EndTrials());
  return MaybeFinish();
}

Status Experiment::SetExperimentState(RunState to) {
  if (state_ == to) return Status::Ok();
  if (!ExperimentTransitionAllowed(state_, to)) {
    return FailedPrecondition("experiment cannot move from " + Name(state_) + " to " + Name(to));
  }
  state_ = to;
  out_->experiment_to = to;
  return Status::Ok();
}

Status Experiment::MoveTrials(RunState to, std::vector<Action>* actions, bool* moved) {
  for (Trial& t : trials_) {
    TrialMove m = MoveWithExperiment(to, t.state, t.presence);
    if (m.to) {
      *moved = true;
      DET_RETURN_IF_ERROR(SetState(t, *m.to));
    }
    if (m.drop_queued) {
      t.presence = TrialPresence::kNone;
      Effect(ProcessEffect::Kind::kDrop, t);
      out_->woken.push_back(t.request_id);
    }
    if (m.stop_process) Effect(ProcessEffect::Kind::kStop, t);
    if (m.kill_process) Effect(ProcessEffect::Kind::kKill, t);
    if (m.tell_searcher_canceled) SearcherExit(t, searcher::ExitedReason::kUserCanceled, actions);
    if (m.request_process) Request(t);
  }
  return Status::Ok();
}

Status Experiment::EndTrials() {
  if (ending_) return Status::Ok();
  FlagScope scope(&ending_);
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<Action> actions;
    DET_RETURN_IF_ERROR(MoveTrials(state_, &actions, &moved));
    DET_RETURN_IF_ERROR(ProcessActions(std::move(actions)));
  }
  return Status::Ok();
}

Status Experiment::MaybeFinish() {
  if (IsTerminal(state_)) return Status::Ok();
  // Asked at every trial's end: the trials are counted only when the experiment could end with
  // none live, and only up to the first live one (counting all of them each time made a pause
  // of 20,000 queued trials 20,000 x 20,000 steps).
  if (!ExperimentEndState(state_, {}, rules_.continued, shutdown_)) return Status::Ok();
  ExperimentTrialsSummary summary;
  for (const Trial& t : trials_) {
    if (!IsTerminal(t.state) || t.has_allocation()) {
      summary.live++;
      break;
    }
    summary.any_completed = summary.any_completed || t.state == RunState::kCompleted;
    summary.any_errored = summary.any_errored || t.state == RunState::kError;
  }
  std::optional<RunState> end = ExperimentEndState(state_, summary, rules_.continued, shutdown_);
  if (!end) return Status::Ok();
  return SetExperimentState(*end);
}

// --- trials ----------------------------------------------------------------------------------

Trial& Experiment::Add(const searcher::CreateAction& create) {
  by_request_[create.request_id] = trials_.size();
  Trial& t = trials_.emplace_back();
  t.request_id = create.request_id;
  t.state = state_ == RunState::kPaused ? RunState::kPaused : RunState::kActive;
  out_->created.push_back(create);
  MarkSearcher(t);
  return t;
}

Status Experiment::SetState(Trial& t, RunState to) {
  if (t.state == to) return Status::Ok();
  if (!TrialTransitionAllowed(t.state, to)) {
    return Internal("trial " + t.request_id + " cannot move from " + Name(t.state) + " to " +
                    Name(to));
  }
  out_->moves.push_back({t.request_id, t.state, to});
  t.state = to;
  return Status::Ok();
}

void Experiment::Request(Trial& t) {
  t.presence = TrialPresence::kQueued;
  Effect(ProcessEffect::Kind::kRequest, t);
}

void Experiment::Effect(ProcessEffect::Kind kind, const Trial& t) {
  out_->processes.push_back({kind, t.request_id});
}

void Experiment::MarkSearcher(const Trial& t) { dirty_.insert(t.request_id); }

void Experiment::SearcherExit(Trial& t, std::optional<searcher::ExitedReason> reason,
                              std::vector<Action>* actions) {
  if (t.searcher.searcher_exited) return;
  t.searcher.searcher_exited = true;
  MarkSearcher(t);
  out_->searcher_heard = true;
  auto append = [actions](std::vector<Action> more) {
    for (Action& a : more) actions->push_back(std::move(a));
  };
  if (reason) append(searcher_->TrialExitedEarly(t.request_id, *reason));
  append(searcher_->TrialExited(t.request_id));
}

Status Experiment::ProcessActions(std::vector<Action> actions) {
  if (!actions.empty()) out_->searcher_heard = true;
  std::deque<Action> queue(std::make_move_iterator(actions.begin()),
                           std::make_move_iterator(actions.end()));
  // Trials created or given an operation here: they may need a process.
  std::vector<Trial*> touched;
  while (!queue.empty()) {
    Action action = std::move(queue.front());
    queue.pop_front();
    if (auto* c = std::get_if<searcher::CreateAction>(&action)) {
      if (Find(c->request_id) == nullptr) {
        touched.push_back(&Add(*c));
      }
      // A replayed creation (its trial stored, the snapshot that knew it not) is still news
      // to a restored searcher.
      for (Action& more : searcher_->TrialCreated(c->request_id)) queue.push_back(more);
    } else if (auto* v = std::get_if<searcher::ValidateAfterAction>(&action)) {
      Trial* t = MutableTrial(v->request_id);
      if (t == nullptr) continue;
      t->searcher.ops.push_back(v->length);
      MarkSearcher(*t);
      out_->woken.push_back(t->request_id);
      touched.push_back(t);
    } else if (auto* cl = std::get_if<searcher::CloseAction>(&action)) {
      Trial* t = MutableTrial(cl->request_id);
      if (t == nullptr) continue;
      CloseEffect effect = ApplyClose(&t->searcher, t->state, t->has_allocation());
      MarkSearcher(*t);
      out_->woken.push_back(t->request_id);
      if (effect == CloseEffect::kStopProcess) {
        Effect(ProcessEffect::Kind::kStop, *t);  // its exit then completes it
      } else if (effect == CloseEffect::kCompleteNow) {
        DET_RETURN_IF_ERROR(SetState(*t, RunState::kCompleted));
        std::vector<Action> more;
        SearcherExit(*t, std::nullopt, &more);
        for (Action& m : more) queue.push_back(std::move(m));
      }
    } else if (auto* s = std::get_if<searcher::ShutdownAction>(&action)) {
      shutdown_ = SearcherShutdown{s->cancel, s->failure};
    }
  }
  for (Trial* t : touched) {
    if (NeedsProcess(state_, t->state, t->has_allocation(), t->searcher)) Request(*t);
  }
  if (IsStopping(state_) && !ending_) DET_RETURN_IF_ERROR(EndTrials());
  return MaybeFinish();
}

// --- what trials and their processes report --------------------------------------------------

Status Experiment::OnPlaced(const Placed& e) {
  Trial* t = MutableTrial(e.request_id);
  if (t == nullptr || t->presence != TrialPresence::kQueued) {
    return FailedPrecondition("trial " + e.request_id + " has no queued allocation to place");
  }
  t->presence = TrialPresence::kRunning;
  return Status::Ok();
}

Status Experiment::OnComplete(const CompleteOperation& e) {
  Trial* t = MutableTrial(e.request_id);
  if (t == nullptr) {
    return FailedPrecondition("trial " + std::to_string(e.trial_id) + " is not running");
  }
  DET_ASSIGN_OR_RETURN(CompletionKind kind,
                       CheckCompletion(t->searcher, e.trial_id, e.length, e.metric));
  out_->completion = kind;
  if (kind == CompletionKind::kAlreadyStored) return Status::Ok();
  std::vector<Action> actions;
  if (!t->searcher.searcher_exited) {
    DET_ASSIGN_OR_RETURN(actions,
                         searcher_->ValidationCompleted(t->request_id, e.metric, e.length));
    out_->searcher_heard = true;
  }
  ApplyCompletion(&t->searcher, e.length);
  MarkSearcher(*t);
  out_->woken.push_back(t->request_id);
  return ProcessActions(std::move(actions));
}

Status Experiment::OnExit(const ProcessExited& e) {
  Trial* found = MutableTrial(e.request_id);
  if (found == nullptr) {
    return FailedPrecondition("trial " + e.request_id + " is not part of the experiment");
  }
  Trial& t = *found;
  t.presence = TrialPresence::kNone;
  out_->woken.push_back(t.request_id);
  ExitOutcome outcome =
      InterpretExit(t.state, t.restarts, rules_.max_restarts, ExitFacts(e.end, t.searcher));
  if (outcome.restarts != t.restarts) {
    t.restarts = outcome.restarts;
    out_->restarts_changed.push_back(t.request_id);
  }
  out_->exit = outcome;
  std::vector<Action> actions;
  switch (outcome.decision) {
    case ExitDecision::kComplete:
      DET_RETURN_IF_ERROR(SetState(t, RunState::kCompleted));
      SearcherExit(t, std::nullopt, &actions);
      break;
    case ExitDecision::kRestart:
    case ExitDecision::kRescheduleFree:
      // Paused (or stopping) meanwhile: it runs again when the experiment is activated.
      if (state_ == RunState::kActive && t.state == RunState::kActive) Request(t);
      break;
    case ExitDecision::kError:
      DET_RETURN_IF_ERROR(SetState(t, RunState::kError));
      SearcherExit(t, searcher::ExitedReason::kErrored, &actions);
      break;
    case ExitDecision::kTerminal: {
      RunState final_state = TerminalFor(t.state);
      DET_RETURN_IF_ERROR(SetState(t, final_state));
      SearcherExit(t,
                   final_state == RunState::kCanceled ? std::optional<searcher::ExitedReason>(
                                                            searcher::ExitedReason::kUserCanceled)
                                                      : std::nullopt,
                   &actions);
      break;
    }
    case ExitDecision::kIdle:
      break;
  }
  return ProcessActions(std::move(actions));
}

Status Experiment::OnEarlyExit(const EarlyExit& e) {
  Trial* t = MutableTrial(e.request_id);
  if (t == nullptr) {
    return FailedPrecondition("trial " + std::to_string(e.trial_id) + " is not running");
  }
  if (t->searcher.exited_early) {
    return InvalidArgument("trial " + std::to_string(e.trial_id) +
                           " already reported an early exit");
  }
  t->searcher.exited_early = e.reason == searcher::ExitedReason::kInvalidHp;
  MarkSearcher(*t);
  out_->searcher_heard = true;
  return ProcessActions(searcher_->TrialExitedEarly(t->request_id, e.reason));
}

Status Experiment::OnKillTrial(const KillTrial& e) {
  Trial* t = MutableTrial(e.request_id);
  if (t == nullptr) {
    return FailedPrecondition("trial " + e.request_id + " is not part of the experiment");
  }
  if (IsTerminal(t->state)) return Status::Ok();
  // As if its experiment were killed, for this trial alone.
  TrialMove m = MoveWithExperiment(RunState::kStoppingKilled, t->state, t->presence);
  if (m.to) DET_RETURN_IF_ERROR(SetState(*t, *m.to));
  if (m.drop_queued) {
    t->presence = TrialPresence::kNone;
    Effect(ProcessEffect::Kind::kDrop, *t);
    out_->woken.push_back(t->request_id);
  }
  if (m.kill_process) Effect(ProcessEffect::Kind::kKill, *t);
  std::vector<Action> actions;
  if (m.tell_searcher_canceled) SearcherExit(*t, searcher::ExitedReason::kUserCanceled, &actions);
  return ProcessActions(std::move(actions));
}

Status Experiment::OnProgress(const ReportProgress& e) {
  Trial* t = MutableTrial(e.request_id);
  if (t == nullptr) return Status::Ok();
  double length =
      static_cast<double>(t->searcher.ops.empty() ? rules_.max_length : t->searcher.ops.front());
  searcher_->SetTrialProgress(t->request_id, std::min(e.fraction, 1.0) * length);
  return Status::Ok();
}

Status Experiment::OnMetrics(const MetricsReported& e) {
  Trial* t = MutableTrial(e.request_id);
  if (t == nullptr) return Status::Ok();
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       searcher_->ValidationMetricsReported(t->request_id, e.metrics));
  return ProcessActions(std::move(actions));
}

// --- a restore and a continue ---------------------------------------------------------------

Status Experiment::OnRestored() {
  std::vector<Action> actions;
  // A search that never started (PAUSED, not initialized) keeps its trials for its first
  // activation; otherwise they follow the experiment.
  if (IsStopping(state_)) {
    DET_RETURN_IF_ERROR(EndTrials());
  } else if ((state_ == RunState::kPaused || state_ == RunState::kActive) && initialized_) {
    bool moved = false;
    DET_RETURN_IF_ERROR(MoveTrials(state_, &actions, &moved));
  }
  if (state_ == RunState::kActive && !initialized_) {
    initialized_ = true;
    out_->searcher_heard = true;
    for (Action& a : searcher_->InitialOperations()) actions.push_back(std::move(a));
  }
  // The rows may show ends the searcher's journal had not recorded yet.
  for (Trial& t : trials_) {
    if (!IsTerminal(t.state)) continue;
    std::optional<searcher::ExitedReason> reason;
    if (t.state == RunState::kError) reason = searcher::ExitedReason::kErrored;
    if (t.state == RunState::kCanceled) reason = searcher::ExitedReason::kUserCanceled;
    SearcherExit(t, reason, &actions);
  }
  if (state_ == RunState::kActive) {
    for (Trial& t : trials_) {
      if (NeedsProcess(state_, t.state, t.has_allocation(), t.searcher)) Request(t);
    }
  }
  return ProcessActions(std::move(actions));
}

Status Experiment::OnContinue(const Continue& e) {
  if (!IsTerminal(state_)) {
    return FailedPrecondition("experiment must be COMPLETED, CANCELED or ERROR to continue (it is " +
                              Name(state_) + ")");
  }
  rules_ = e.rules;
  // The one way out of a terminal state, for the experiment and its unfinished trials.
  state_ = RunState::kActive;
  out_->experiment_to = RunState::kActive;
  for (Trial& t : trials_) {
    if (t.state == RunState::kCompleted) continue;
    out_->moves.push_back({t.request_id, t.state, RunState::kActive});
    t.state = RunState::kActive;
    if (t.restarts != 0) {
      t.restarts = 0;
      out_->restarts_changed.push_back(t.request_id);
    }
    t.searcher.closed = false;
    MarkSearcher(t);
    out_->woken.push_back(t.request_id);
    if (NeedsProcess(state_, t.state, t.has_allocation(), t.searcher)) Request(t);
  }
  return MaybeFinish();
}

}  // namespace det::master::core
