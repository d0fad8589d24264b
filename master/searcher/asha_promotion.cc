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
      rungs_(static_cast<size_t>(num_rungs)) {}

void AshaPromotionMethod::CreateTrial(SearchContext& ctx, std::vector<Action>* actions) {
  CreateAction create = NewCreateAction(ctx.hparams, ctx.rng);
  Trial& t = trials_[create.request_id];
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

std::vector<Action> AshaPromotionMethod::TrialCreated(SearchContext& ctx, const std::string& id) {
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || !it->second.awaiting || it->second.exited) return actions;
  actions.emplace_back(std::in_place_type<ValidateAfterAction>,
                       ValidateAfterAction{.request_id = id,
                                           .length = units_[static_cast<size_t>(it->second.rung)]});
  return actions;
}

std::vector<std::string> AshaPromotionMethod::Promotions(int rung, const std::string& id,
                                                         double metric) {
  std::vector<Entry>& entries = rungs_[static_cast<size_t>(rung)].entries;
  auto old_promote = static_cast<size_t>(static_cast<double>(entries.size()) / divisor_);
  auto pos = std::upper_bound(entries.begin(), entries.end(), metric,
                              [](double m, const Entry& e) { return m < e.metric; });
  auto idx = static_cast<size_t>(pos - entries.begin());
  entries.insert(pos, Entry{id, metric, false});
  auto new_promote = static_cast<size_t>(static_cast<double>(entries.size()) / divisor_);
  if (idx < new_promote) {
    entries[idx].promoted = true;
    return {id};
  }
  if (new_promote != old_promote && !entries[old_promote].promoted) {
    entries[old_promote].promoted = true;
    return {entries[old_promote].id};
  }
  return {};
}

void AshaPromotionMethod::Promote(SearchContext& ctx, const std::string& id, double metric,
                                  std::vector<Action>* actions) {
  Trial& t = trials_[id];
  int r = t.rung;
  Rung& rung = rungs_[static_cast<size_t>(r)];
  rung.outstanding--;
  t.awaiting = false;
  if (r == 0) Reach(t);
  bool added_training = false;
  int top = static_cast<int>(rungs_.size()) - 1;
  if (r == top) {
    auto pos = std::upper_bound(rung.entries.begin(), rung.entries.end(), metric,
                                [](double m, const Entry& e) { return m < e.metric; });
    rung.entries.insert(pos, Entry{id, metric, false});
    if (!t.exited && !t.closed) {
      actions->emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
    }
    Finish(t);
  } else {
    for (const std::string& pid : Promotions(r, id, metric)) {
      Trial& p = trials_[pid];
      p.rung = r + 1;
      p.awaiting = true;
      rungs_[static_cast<size_t>(r + 1)].outstanding++;
      if (!p.exited) {
        actions->emplace_back(
            std::in_place_type<ValidateAfterAction>,
            ValidateAfterAction{.request_id = pid, .length = units_[static_cast<size_t>(r + 1)]});
        added_training = true;
      } else {
        Promote(ctx, pid, kWorstMetric, actions);
      }
    }
  }
  int64_t all = static_cast<int64_t>(trials_.size()) - invalid_;
  if (!added_training && all < max_trials_) CreateTrial(ctx, actions);
  if (static_cast<int64_t>(rungs_[0].entries.size()) >= max_trials_) CloseOut(actions);
}

void AshaPromotionMethod::CloseOut(std::vector<Action>* actions) {
  for (Rung& rung : rungs_) {
    if (rung.outstanding > 0) break;
    if (rung.closed_out) continue;
    rung.closed_out = true;
    for (const Entry& e : rung.entries) {
      if (e.promoted) continue;
      Trial& t = trials_[e.id];
      if (t.closed) continue;
      if (!t.exited) {
        actions->emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = e.id});
      }
      Finish(t);
    }
  }
}

Result<std::vector<Action>> AshaPromotionMethod::ValidationCompleted(SearchContext& ctx,
                                                                     const std::string& id,
                                                                     double metric,
                                                                     uint64_t length) {
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end()) return NotFound("no trial with request id " + id);
  Trial& t = it->second;
  if (!t.awaiting || t.exited || length != units_[static_cast<size_t>(t.rung)]) {
    return InvalidArgument("trial " + id + " owes no validation at length " +
                           std::to_string(length));
  }
  Promote(ctx, id, smaller_is_better_ ? metric : -metric, &actions);
  return actions;
}

std::vector<Action> AshaPromotionMethod::TrialExitedEarly(SearchContext& ctx,
                                                          const std::string& id,
                                                          ExitedReason reason) {
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || it->second.exited) return actions;
  Trial& t = it->second;
  if (reason == ExitedReason::kInvalidHp || reason == ExitedReason::kInitInvalidHp) {
    if (t.closed) {  // already finished: nothing left to undo
      t.exited = true;
      return actions;
    }
    t.exited = true;
    actions.emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
    if (t.reached) --reached_;
    t.invalid = true;
    t.closed = true;
    ++invalid_;
    if (t.awaiting) rungs_[static_cast<size_t>(t.rung)].outstanding--;
    t.awaiting = false;
    for (int r = 0; r <= t.rung; ++r) {
      auto& entries = rungs_[static_cast<size_t>(r)].entries;
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const Entry& e) { return e.id == id; }),
                    entries.end());
    }
    int64_t all = static_cast<int64_t>(trials_.size()) - invalid_;
    if (all < max_trials_) CreateTrial(ctx, &actions);
    return actions;
  }
  t.exited = true;
  if (t.closed) return actions;
  if (t.awaiting) {
    Promote(ctx, id, kWorstMetric, &actions);
    if (!t.closed) Finish(t);
  } else {
    Finish(t);
  }
  return actions;
}

std::vector<Action> AshaPromotionMethod::TrialExited(SearchContext& ctx, const std::string& id) {
  auto it = trials_.find(id);
  if (it == trials_.end()) return std::vector<Action>();
  if (!it->second.exited && !it->second.closed) {
    return TrialExitedEarly(ctx, id, ExitedReason::kUserRequestedStop);
  }
  it->second.exited = true;
  return std::vector<Action>();
}

double AshaPromotionMethod::Progress(const TrialUnits& units) const {
  if (max_trials_ <= 0) return 1;
  return 0.5 * static_cast<double>(reached_ + finished_) / static_cast<double>(max_trials_);
}

nlohmann::json AshaPromotionMethod::Snapshot() const {
  json rungs = json::array();
  for (const Rung& r : rungs_) {
    json entries = json::array();
    for (const Entry& e : r.entries) entries.push_back(json::array({e.id, e.metric, e.promoted}));
    rungs.push_back(json{{"entries", std::move(entries)},
                         {"outstanding", r.outstanding},
                         {"closed_out", r.closed_out}});
  }
  json trials = json::object();
  for (const auto& [id, t] : trials_) {
    trials[id] = json::array({t.rung, t.awaiting, t.exited, t.closed, t.invalid, t.reached,
                              t.counted_done});
  }
  return json{{"rungs", std::move(rungs)}, {"trials", std::move(trials)},
              {"invalid", invalid_},        {"reached", reached_},
              {"finished", finished_}};
}

Status AshaPromotionMethod::Restore(const nlohmann::json& snapshot) {
  const json& rungs = snapshot.at("rungs");
  if (rungs.size() != rungs_.size()) {
    return InvalidArgument("invalid searcher snapshot: rung count differs from the config");
  }
  std::vector<Rung> restored(rungs_.size());
  for (size_t i = 0; i < rungs.size(); ++i) {
    for (const json& e : rungs[i].at("entries")) {
      restored[i].entries.push_back(
          Entry{e.at(0).get<std::string>(), e.at(1).get<double>(), e.at(2).get<bool>()});
    }
    restored[i].outstanding = rungs[i].at("outstanding").get<int64_t>();
    restored[i].closed_out = rungs[i].at("closed_out").get<bool>();
  }
  std::map<std::string, Trial> trials;
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
    trials.emplace(id, t);
  }
  rungs_ = std::move(restored);
  trials_ = std::move(trials);
  invalid_ = snapshot.at("invalid").get<int64_t>();
  reached_ = snapshot.at("reached").get<int64_t>();
  finished_ = snapshot.at("finished").get<int64_t>();
  return Status::Ok();
}

}  // namespace det::master::searcher
