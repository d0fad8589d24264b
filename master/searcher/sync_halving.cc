#include "master/searcher/sync_halving.h"

#include <algorithm>
#include <cmath>

#include "master/searcher/create_action.h"

namespace det::master::searcher {

namespace {

using nlohmann::json;

int64_t TruncToInt(double v) {
  if (!(v > 0)) return 0;
  if (v >= 9e18) return INT64_MAX;
  return static_cast<int64_t>(v);
}

}  // namespace

std::vector<SyncRung> SyncHalvingRungsForBudget(int num_rungs, uint64_t max_length, uint64_t budget,
                                                double divisor) {
  std::vector<SyncRung> rungs(static_cast<size_t>(num_rungs));
  for (int k = 0; k < num_rungs; ++k) {
    double c = std::pow(divisor, static_cast<double>(num_rungs - 1 - k));
    rungs[k].units = static_cast<uint64_t>(
        std::max<int64_t>(TruncToInt(static_cast<double>(max_length) / c), 1));
    rungs[k].start = std::max<int64_t>(TruncToInt(c), 1);
  }
  double expected = 0;
  for (int k = 0; k < num_rungs; ++k) {
    double prev = k == 0 ? 0 : static_cast<double>(rungs[k - 1].units);
    expected += (static_cast<double>(rungs[k].units) - prev) * static_cast<double>(rungs[k].start);
  }
  double mult = expected > 0 ? static_cast<double>(budget) / expected : 0;
  for (int k = 0; k < num_rungs; ++k) {
    rungs[k].start = TruncToInt(mult * static_cast<double>(rungs[k].start));
    if (k > 0) {
      rungs[k].units = std::max(rungs[k].units, rungs[k - 1].units);
      rungs[k].start = std::max<int64_t>(std::min(rungs[k].start, rungs[k - 1].start), 1);
      rungs[k - 1].promote = rungs[k].start;
    }
  }
  return rungs;
}

std::vector<SyncRung> SyncHalvingRungsForTrials(int num_rungs, uint64_t max_length, int64_t trials,
                                                double divisor) {
  std::vector<SyncRung> rungs(static_cast<size_t>(num_rungs));
  for (int k = 0; k < num_rungs; ++k) {
    double c = std::pow(divisor, static_cast<double>(num_rungs - 1 - k));
    rungs[k].units = static_cast<uint64_t>(
        std::max<int64_t>(TruncToInt(static_cast<double>(max_length) / c), 1));
    rungs[k].start = std::max<int64_t>(
        TruncToInt(static_cast<double>(trials) / std::pow(divisor, static_cast<double>(k))), 1);
    if (k > 0) {
      rungs[k].units = std::max(rungs[k].units, rungs[k - 1].units);
      rungs[k - 1].promote = rungs[k].start;
    }
  }
  return rungs;
}

SyncHalvingMethod::SyncHalvingMethod(std::vector<SyncRung> rungs, bool smaller_is_better)
    : rungs_(std::move(rungs)), smaller_is_better_(smaller_is_better), entries_(rungs_.size()) {
  for (size_t k = 0; k < rungs_.size(); ++k) {
    double prev = k == 0 ? 0 : static_cast<double>(rungs_[k - 1].units);
    expected_units_ +=
        (static_cast<double>(rungs_[k].units) - prev) * static_cast<double>(rungs_[k].start);
  }
}

std::vector<Action> SyncHalvingMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> actions;
  int64_t n = rungs_.empty() ? 0 : rungs_[0].start;
  for (int64_t i = 0; i < n; ++i) {
    CreateAction create = NewCreateAction(ctx.hparams, ctx.rng);
    Trial& t = trials_[create.request_id];
    t.awaiting = true;
    actions.emplace_back(std::in_place_type<CreateAction>, std::move(create));
  }
  return actions;
}

std::vector<Action> SyncHalvingMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || !it->second.awaiting || it->second.exited) return actions;
  actions.emplace_back(std::in_place_type<ValidateAfterAction>,
                       ValidateAfterAction{.request_id = id, .length = rungs_[0].units});
  return actions;
}

void SyncHalvingMethod::Report(const std::string& id, double metric, std::vector<Action>* actions) {
  Trial& t = trials_[id];
  t.awaiting = false;
  auto k = static_cast<size_t>(t.rung);
  if (k + 1 == rungs_.size()) {
    if (!t.exited && !t.closed) {
      actions->emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
    }
    t.closed = true;
    return;
  }
  std::vector<Entry>& entries = entries_[k];
  auto pos = std::upper_bound(entries.begin(), entries.end(), metric,
                              [](double m, const Entry& e) { return m < e.metric; });
  auto idx = static_cast<int64_t>(pos - entries.begin());
  entries.insert(pos, Entry{id, metric});
  int64_t len = static_cast<int64_t>(entries.size());
  int64_t p = len + rungs_[k].promote - rungs_[k].start;
  if (p > 0) {
    std::string pid = idx < p ? id : entries[static_cast<size_t>(p - 1)].id;
    Trial& promoted = trials_[pid];
    promoted.rung = static_cast<int>(k + 1);
    promoted.awaiting = true;
    if (!promoted.exited) {
      actions->emplace_back(std::in_place_type<ValidateAfterAction>,
                            ValidateAfterAction{.request_id = pid, .length = rungs_[k + 1].units});
    } else {
      Report(pid, kWorstMetric, actions);
    }
  }
  if (len == rungs_[k].start) {
    for (size_t i = static_cast<size_t>(std::max<int64_t>(rungs_[k].promote, 0));
         i < entries.size(); ++i) {
      Trial& c = trials_[entries[i].id];
      if (c.closed || c.rung != static_cast<int>(k)) continue;
      if (!c.exited) {
        actions->emplace_back(std::in_place_type<CloseAction>,
                              CloseAction{.request_id = entries[i].id});
      }
      c.closed = true;
    }
  }
}

Result<std::vector<Action>> SyncHalvingMethod::ValidationCompleted(SearchContext& ctx,
                                                                   TrialHandle trial, double metric,
                                                                   uint64_t length) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end()) return NotFound("no trial with request id " + id);
  Trial& t = it->second;
  if (!t.awaiting || t.exited || length != rungs_[static_cast<size_t>(t.rung)].units) {
    return InvalidArgument("trial " + id + " owes no validation at length " +
                           std::to_string(length));
  }
  Report(id, smaller_is_better_ ? metric : -metric, &actions);
  return actions;
}

std::vector<Action> SyncHalvingMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                        ExitedReason reason) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || it->second.exited) return actions;
  Trial& t = it->second;
  t.exited = true;
  if (t.closed) return actions;
  if (t.awaiting) Report(id, kWorstMetric, &actions);
  return actions;
}

std::vector<Action> SyncHalvingMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  const std::string id(ctx.ids.id(trial));
  auto it = trials_.find(id);
  if (it == trials_.end()) return std::vector<Action>();
  if (!it->second.exited && !it->second.closed) {
    return TrialExitedEarly(ctx, trial, ExitedReason::kUserRequestedStop);
  }
  it->second.exited = true;
  return std::vector<Action>();
}

double SyncHalvingMethod::Progress(const TrialUnits& units) const {
  if (expected_units_ <= 0) return 1;
  double sum = 0;
  for (const auto& [id, t] : trials_) {
    double trained = units.Of(id).value_or(0);
    sum += std::min(trained, static_cast<double>(rungs_[static_cast<size_t>(t.rung)].units));
  }
  return sum / expected_units_;
}

nlohmann::json SyncHalvingMethod::Snapshot(const RequestIdIndex& ids) const {
  json entries = json::array();
  for (const auto& rung : entries_) {
    json list = json::array();
    for (const Entry& e : rung) list.push_back(json::array({e.id, e.metric}));
    entries.push_back(std::move(list));
  }
  json trials = json::object();
  for (const auto& [id, t] : trials_) {
    trials[id] = json::array({t.rung, t.awaiting, t.exited, t.closed});
  }
  return json{{"entries", std::move(entries)}, {"trials", std::move(trials)}};
}

Status SyncHalvingMethod::Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) {
  const json& entries = snapshot.at("entries");
  if (entries.size() != rungs_.size()) {
    return InvalidArgument("invalid searcher snapshot: rung count differs from the config");
  }
  std::vector<std::vector<Entry>> restored(rungs_.size());
  for (size_t k = 0; k < rungs_.size(); ++k) {
    for (const json& e : entries[k]) {
      restored[k].push_back(Entry{e.at(0).get<std::string>(), e.at(1).get<double>()});
    }
  }
  std::map<std::string, Trial> trials;
  for (const auto& [id, a] : snapshot.at("trials").items()) {
    Trial t;
    t.rung = a.at(0).get<int>();
    t.awaiting = a.at(1).get<bool>();
    t.exited = a.at(2).get<bool>();
    t.closed = a.at(3).get<bool>();
    if (t.rung < 0 || t.rung >= static_cast<int>(rungs_.size())) {
      return InvalidArgument("invalid searcher snapshot: rung out of range");
    }
    trials.emplace(id, t);
  }
  entries_ = std::move(restored);
  trials_ = std::move(trials);
  return Status::Ok();
}

}  // namespace det::master::searcher
