#include "master/searcher/asha_promotion.h"

#include <algorithm>

#include "master/searcher/bracket_math.h"
#include "master/searcher/create_action.h"

namespace det::master::searcher {

namespace {
using nlohmann::json;
}  // namespace

AshaPromotionMethod::AshaPromotionMethod(int num_rungs, uint64_t max_length, double divisor,
                                         int64_t max_trials, int64_t max_concurrent_trials,
                                         bool smaller_is_better)
    : units_(MakeRungUnits(num_rungs, static_cast<double>(max_length), divisor)),
      divisor_(divisor),
      max_trials_(max_trials),
      max_concurrent_trials_(max_concurrent_trials),
      smaller_is_better_(smaller_is_better),
      rungs_(static_cast<size_t>(num_rungs), Rung(divisor)) {}

uint32_t AshaPromotionMethod::Local(TrialHandle trial) const {
  return trial < local_.size() ? local_[trial] : kNoTrial;
}

AshaPromotionMethod::Trial* AshaPromotionMethod::Find(TrialHandle trial) {
  uint32_t local = Local(trial);
  return local == kNoTrial ? nullptr : &trials_[local];
}

void AshaPromotionMethod::CreateTrial(SearchContext& ctx, std::vector<Action>* actions) {
  CreateAction create = NewTrialAction(ctx);
  TrialHandle trial = ctx.ids.Add(create.request_id);
  if (trial >= local_.size()) local_.resize(trial + 1, kNoTrial);
  if (local_[trial] == kNoTrial) {
    local_[trial] = static_cast<uint32_t>(trials_.size());
    trials_.push_back(Trial{.trial = trial});
  }
  Trial& t = trials_[local_[trial]];
  t.rung = 0;
  t.awaiting = true;
  rungs_[0].outstanding++;
  actions->emplace_back(std::in_place_type<CreateAction>, std::move(create));
}

void AshaPromotionMethod::Reach(Trial& t) {
  if (t.reached || t.invalid) return;
  t.reached = true;
  ++reached_;
}

void AshaPromotionMethod::Finish(Trial& t) {
  t.closed = true;
  Reach(t);
  if (t.counted_done || t.invalid) return;
  t.counted_done = true;
  ++finished_;
}

std::vector<Action> AshaPromotionMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> actions;
  int64_t n = AshaInitialTrials(max_concurrent_trials_, max_trials_,
                                static_cast<int>(units_.size()), divisor_);
  for (int64_t i = 0; i < n; ++i) CreateTrial(ctx, &actions);
  return actions;
}

std::vector<Action> AshaPromotionMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  std::vector<Action> actions;
  Trial* t = Find(trial);
  if (t == nullptr || !t->awaiting || t->exited) return actions;
  actions.emplace_back(std::in_place_type<ValidateAfterAction>,
                       ValidateAfterAction{.request_id = std::string(ctx.ids.id(trial)),
                                           .length = units_[static_cast<size_t>(t->rung)]});
  return actions;
}

// Rule 3 on a ranking: with k = floor(n/d) before the insert and k' = floor((n+1)/d) after
// (k' - k is 0 or 1 as d > 1), the newcomer's index is < k' exactly when it lands in the low
// part, or at position k when k' = k + 1; the entry at position k is the high part's first.
std::optional<uint32_t> AshaPromotionMethod::Promotions(int rung, uint32_t trial, double metric) {
  RungRanking& ranking = rungs_[static_cast<size_t>(rung)].ranking;
  size_t old_promote = ranking.split();
  auto new_promote = static_cast<size_t>(static_cast<double>(ranking.size() + 1) / divisor_);
  bool grows = new_promote != old_promote;
  std::optional<uint32_t> promoted;
  if (ranking.LandsInLow(metric) || (grows && ranking.LandsAtOrBeforeSplit(metric))) {
    promoted = trial;
  } else if (grows) {
    uint32_t candidate = ranking.FirstHigh().trial;
    if (trials_[candidate].rung <= rung) promoted = candidate;  // not promoted yet
  }
  ranking.Insert(metric, trial);
  return promoted;
}

void AshaPromotionMethod::Promote(SearchContext& ctx, uint32_t handle, double metric,
                                  std::vector<Action>* actions) {
  Trial& t = trials_[handle];
  int r = t.rung;
  Rung& rung = rungs_[static_cast<size_t>(r)];
  rung.outstanding--;
  t.awaiting = false;
  if (r == 0) Reach(t);
  bool added_training = false;
  int top = static_cast<int>(rungs_.size()) - 1;
  if (r == top) {
    rung.ranking.Insert(metric, handle);
    if (!t.exited && !t.closed) {
      actions->emplace_back(std::in_place_type<CloseAction>,
                            CloseAction{.request_id = std::string(ctx.ids.id(t.trial))});
    }
    Finish(t);
  } else if (std::optional<uint32_t> pid = Promotions(r, handle, metric)) {
    Trial& p = trials_[*pid];
    p.rung = r + 1;
    p.awaiting = true;
    rungs_[static_cast<size_t>(r + 1)].outstanding++;
    if (!p.exited) {
      actions->emplace_back(std::in_place_type<ValidateAfterAction>,
                            ValidateAfterAction{.request_id = std::string(ctx.ids.id(p.trial)),
                                                .length = units_[static_cast<size_t>(r + 1)]});
      added_training = true;
    } else {
      Promote(ctx, *pid, kWorstMetric, actions);
    }
  }
  int64_t all = static_cast<int64_t>(trials_.size()) - invalid_;
  if (!added_training && all < max_trials_) CreateTrial(ctx, actions);
  if (static_cast<int64_t>(rungs_[0].ranking.size()) >= max_trials_) CloseOut(ctx.ids, actions);
}

void AshaPromotionMethod::CloseOut(const RequestIdIndex& ids, std::vector<Action>* actions) {
  for (size_t r = 0; r < rungs_.size(); ++r) {
    Rung& rung = rungs_[r];
    if (rung.outstanding > 0) break;
    if (rung.closed_out) continue;
    rung.closed_out = true;
    for (const RungRanking::Entry& e : rung.ranking.Sorted()) {
      Trial& t = trials_[e.trial];
      if (t.rung > static_cast<int>(r) || t.closed) continue;  // promoted, or done already
      if (!t.exited) {
        actions->emplace_back(std::in_place_type<CloseAction>,
                              CloseAction{.request_id = std::string(ids.id(t.trial))});
      }
      Finish(t);
    }
  }
}

Result<std::vector<Action>> AshaPromotionMethod::ValidationCompleted(SearchContext& ctx,
                                                                     TrialHandle trial,
                                                                     double metric,
                                                                     uint64_t length) {
  std::vector<Action> actions;
  uint32_t local = Local(trial);
  if (local == kNoTrial)
    return NotFound("no trial with request id " + std::string(ctx.ids.id(trial)));
  Trial& t = trials_[local];
  if (!t.awaiting || t.exited || length != units_[static_cast<size_t>(t.rung)]) {
    return InvalidArgument("trial " + std::string(ctx.ids.id(trial)) +
                           " owes no validation at length " + std::to_string(length));
  }
  Promote(ctx, local, smaller_is_better_ ? metric : -metric, &actions);
  return actions;
}

std::vector<Action> AshaPromotionMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                          ExitedReason reason) {
  std::vector<Action> actions;
  uint32_t handle = Local(trial);
  if (handle == kNoTrial || trials_[handle].exited) return actions;
  Trial& t = trials_[handle];
  if (reason == ExitedReason::kInvalidHp || reason == ExitedReason::kInitInvalidHp) {
    if (t.closed) {  // already finished: nothing left to undo
      t.exited = true;
      return actions;
    }
    t.exited = true;
    actions.emplace_back(std::in_place_type<CloseAction>,
                         CloseAction{.request_id = std::string(ctx.ids.id(trial))});
    if (t.reached) --reached_;
    t.invalid = true;
    t.closed = true;
    ++invalid_;
    if (t.awaiting) rungs_[static_cast<size_t>(t.rung)].outstanding--;
    t.awaiting = false;
    for (int r = 0; r <= t.rung; ++r) rungs_[static_cast<size_t>(r)].ranking.Erase(handle);
    int64_t all = static_cast<int64_t>(trials_.size()) - invalid_;
    if (all < max_trials_) CreateTrial(ctx, &actions);
    return actions;
  }
  t.exited = true;
  if (t.closed) return actions;
  if (t.awaiting) {
    Promote(ctx, handle, kWorstMetric, &actions);
    if (!t.closed) Finish(t);
  } else {
    Finish(t);
  }
  return actions;
}

std::vector<Action> AshaPromotionMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  Trial* t = Find(trial);
  if (t == nullptr) return std::vector<Action>();
  if (!t->exited && !t->closed) {
    return TrialExitedEarly(ctx, trial, ExitedReason::kUserRequestedStop);
  }
  t->exited = true;
  return std::vector<Action>();
}

double AshaPromotionMethod::Progress(const TrialUnits& units) const {
  if (max_trials_ <= 0) return 1;
  return 0.5 * static_cast<double>(reached_ + finished_) / static_cast<double>(max_trials_);
}

nlohmann::json AshaPromotionMethod::Snapshot(const RequestIdIndex& ids) const {
  json rungs = json::array();
  for (size_t r = 0; r < rungs_.size(); ++r) {
    json entries = json::array();
    for (const RungRanking::Entry& e : rungs_[r].ranking.Sorted()) {
      const Trial& t = trials_[e.trial];
      entries.push_back(
          json::array({std::string(ids.id(t.trial)), e.metric, t.rung > static_cast<int>(r)}));
    }
    rungs.push_back(json{{"entries", std::move(entries)},
                         {"outstanding", rungs_[r].outstanding},
                         {"closed_out", rungs_[r].closed_out}});
  }
  json trials = json::object();
  for (const Trial& t : trials_) {
    trials[std::string(ids.id(t.trial))] =
        json::array({t.rung, t.awaiting, t.exited, t.closed, t.invalid, t.reached, t.counted_done});
  }
  return json{{"rungs", std::move(rungs)},
              {"trials", std::move(trials)},
              {"invalid", invalid_},
              {"reached", reached_},
              {"finished", finished_}};
}

Status AshaPromotionMethod::Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) {
  const json& rungs = snapshot.at("rungs");
  if (rungs.size() != rungs_.size()) {
    return InvalidArgument("invalid searcher snapshot: rung count differs from the config");
  }
  std::deque<Trial> trials;
  std::vector<uint32_t> local(ids.size(), kNoTrial);
  // Handles in request-id order (the snapshot's); only lookups depend on them.
  for (const auto& [id, a] : snapshot.at("trials").items()) {
    Trial t;
    t.rung = a.at(0).get<int>();
    t.awaiting = a.at(1).get<bool>();
    t.exited = a.at(2).get<bool>();
    t.closed = a.at(3).get<bool>();
    t.invalid = a.at(4).get<bool>();
    t.reached = a.at(5).get<bool>();
    t.counted_done = a.at(6).get<bool>();
    if (t.rung < 0 || t.rung >= static_cast<int>(rungs_.size())) {
      return InvalidArgument("invalid searcher snapshot: rung out of range");
    }
    t.trial = ids.Find(id);
    if (t.trial == kNoTrial) {
      return InvalidArgument("invalid searcher snapshot: ASHA state of unknown trial " + id);
    }
    local[t.trial] = static_cast<uint32_t>(trials.size());
    trials.push_back(std::move(t));
  }
  std::vector<Rung> restored(rungs_.size(), Rung(divisor_));
  for (size_t i = 0; i < rungs.size(); ++i) {
    std::vector<RungRanking::Entry> entries;
    for (const json& e : rungs[i].at("entries")) {
      TrialHandle trial = ids.Find(e.at(0).get<std::string>());
      uint32_t h = trial == kNoTrial ? kNoTrial : local[trial];
      if (h == kNoTrial) {
        return InvalidArgument("invalid searcher snapshot: rung entry of unknown trial " +
                               e.at(0).dump());
      }
      entries.push_back(RungRanking::Entry{.metric = e.at(1).get<double>(), .trial = h});
    }
    restored[i].ranking.Assign(entries);
    restored[i].outstanding = rungs[i].at("outstanding").get<int64_t>();
    restored[i].closed_out = rungs[i].at("closed_out").get<bool>();
  }
  rungs_ = std::move(restored);
  trials_ = std::move(trials);
  local_ = std::move(local);
  invalid_ = snapshot.at("invalid").get<int64_t>();
  reached_ = snapshot.at("reached").get<int64_t>();
  finished_ = snapshot.at("finished").get<int64_t>();
  return Status::Ok();
}

}  // namespace det::master::searcher
