#include "master/searcher/asha_stopping.h"

#include <algorithm>
#include <cmath>

#include "master/searcher/bracket_math.h"
#include "master/searcher/create_action.h"

namespace det::master::searcher {

namespace {
using nlohmann::json;
}  // namespace

AshaStoppingMethod::AshaStoppingMethod(Mode mode, int num_rungs, double max_units, double divisor,
                                       int64_t max_trials, int64_t max_concurrent_trials,
                                       bool smaller_is_better, std::string metric_name,
                                       std::string time_metric)
    : mode_(mode),
      units_(MakeRungUnits(num_rungs, max_units, divisor)),
      divisor_(divisor),
      max_trials_(max_trials),
      max_concurrent_trials_(max_concurrent_trials),
      smaller_is_better_(smaller_is_better),
      metric_name_(std::move(metric_name)),
      time_metric_(std::move(time_metric)),
      rungs_(static_cast<size_t>(num_rungs)) {}

void AshaStoppingMethod::CreateTrial(SearchContext& ctx, std::vector<Action>* actions) {
  CreateAction create = NewTrialAction(ctx);
  trials_[create.request_id];
  actions->emplace_back(std::in_place_type<CreateAction>, std::move(create));
}

void AshaStoppingMethod::Reach(Trial& t) {
  if (t.reached || t.invalid) return;
  t.reached = true;
  ++reached_;
}

void AshaStoppingMethod::Finish(Trial& t) {
  t.stopped = true;
  Reach(t);
  if (t.counted_done || t.invalid) return;
  t.counted_done = true;
  ++finished_;
}

void AshaStoppingMethod::Release(SearchContext& ctx, Trial& t, std::vector<Action>* actions) {
  if (t.released) return;
  t.released = true;
  int64_t all = static_cast<int64_t>(trials_.size()) - invalid_;
  if (all < max_trials_) CreateTrial(ctx, actions);
}

size_t AshaStoppingMethod::Insert(int rung, const std::string& id, double value) {
  auto& entries = rungs_[static_cast<size_t>(rung)];
  auto pos = std::lower_bound(entries.begin(), entries.end(), value,
                              [](const Entry& e, double v) { return e.metric < v; });
  auto idx = static_cast<size_t>(pos - entries.begin());
  entries.insert(pos, Entry{id, value});
  return idx;
}

std::vector<Action> AshaStoppingMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> actions;
  int64_t n = AshaInitialTrials(max_concurrent_trials_, max_trials_,
                                static_cast<int>(units_.size()), divisor_);
  for (int64_t i = 0; i < n; ++i) CreateTrial(ctx, &actions);
  return actions;
}

std::vector<Action> AshaStoppingMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (mode_ != Mode::kOperations || it == trials_.end() || it->second.stopped) return actions;
  actions.emplace_back(std::in_place_type<ValidateAfterAction>,
                       ValidateAfterAction{.request_id = id, .length = units_[0]});
  return actions;
}

void AshaStoppingMethod::Decide(SearchContext& ctx, const std::string& id, double value, uint64_t t,
                                std::vector<Action>* actions) {
  Trial& trial = trials_[id];
  int top = static_cast<int>(units_.size()) - 1;
  bool stop = false;
  for (int r = trial.rung; r <= top; ++r) {
    trial.rung = r;
    if (t < units_[static_cast<size_t>(r)]) {
      if (mode_ == Mode::kOperations) {
        actions->emplace_back(
            std::in_place_type<ValidateAfterAction>,
            ValidateAfterAction{.request_id = id, .length = units_[static_cast<size_t>(r)]});
      }
      return;
    }
    size_t idx = Insert(r, id, value);
    if (r == 0) Reach(trial);
    if (r == top) {
      stop = true;
      break;
    }
    auto len = static_cast<double>(rungs_[static_cast<size_t>(r)].size());
    auto keep = std::max<size_t>(static_cast<size_t>(len / divisor_), 1);
    if (idx >= keep) {
      stop = true;
      break;
    }
  }
  if (!stop) return;
  actions->emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
  Finish(trial);
  Release(ctx, trial, actions);
}

Result<std::vector<Action>> AshaStoppingMethod::ValidationCompleted(SearchContext& ctx,
                                                                    TrialHandle trial,
                                                                    double metric,
                                                                    uint64_t length) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end()) return NotFound("no trial with request id " + id);
  if (mode_ != Mode::kOperations) {
    return FailedPrecondition("searcher uses time_metric: report validation metrics instead");
  }
  if (it->second.stopped) return actions;
  Decide(ctx, id, smaller_is_better_ ? metric : -metric, length, &actions);
  return actions;
}

Result<std::vector<Action>> AshaStoppingMethod::ValidationMetricsReported(
    SearchContext& ctx, TrialHandle trial, const nlohmann::json& metrics) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  if (mode_ != Mode::kTime) return actions;
  auto it = trials_.find(id);
  if (it == trials_.end()) return NotFound("no trial with request id " + id);
  if (!metrics.is_object()) return InvalidArgument("error parsing searcher metric: not a map");
  auto m = metrics.find(metric_name_);
  if (m == metrics.end() || !m->is_number() || !std::isfinite(m->get<double>())) {
    return InvalidArgument("error parsing searcher metric: '" + metric_name_ +
                           "' is missing or not a number");
  }
  auto tm = metrics.find(time_metric_);
  if (tm == metrics.end() || !tm->is_number() || !(tm->get<double>() >= 0) ||
      !std::isfinite(tm->get<double>())) {
    return InvalidArgument("error parsing searcher metric: time metric '" + time_metric_ +
                           "' is missing or not a non-negative number");
  }
  if (it->second.stopped) return actions;
  double value = m->get<double>();
  auto t = static_cast<uint64_t>(tm->get<double>());
  Decide(ctx, id, smaller_is_better_ ? value : -value, t, &actions);
  return actions;
}

std::vector<Action> AshaStoppingMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                         ExitedReason reason) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || it->second.exited) return actions;
  Trial& t = it->second;
  t.exited = true;
  if (t.stopped) return actions;
  if (reason == ExitedReason::kInvalidHp || reason == ExitedReason::kInitInvalidHp) {
    actions.emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
    if (t.reached) --reached_;
    t.invalid = true;
    t.stopped = true;
    ++invalid_;
    for (int r = 0; r <= t.rung; ++r) {
      auto& entries = rungs_[static_cast<size_t>(r)];
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const Entry& e) { return e.id == id; }),
                    entries.end());
    }
    Release(ctx, t, &actions);
    return actions;
  }
  Insert(t.rung, id, kWorstMetric);
  Finish(t);
  Release(ctx, t, &actions);
  return actions;
}

std::vector<Action> AshaStoppingMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end()) return actions;
  Trial& t = it->second;
  t.exited = true;
  if (!t.stopped) {
    // Ended on its own before being stopped: no metric is invented, its slot is freed.
    Finish(t);
    Release(ctx, t, &actions);
  }
  return actions;
}

double AshaStoppingMethod::Progress(const TrialUnits& units) const {
  if (max_trials_ <= 0) return 1;
  return 0.5 * static_cast<double>(reached_ + finished_) / static_cast<double>(max_trials_);
}

nlohmann::json AshaStoppingMethod::Snapshot(const RequestIdIndex& ids) const {
  json rungs = json::array();
  for (const auto& r : rungs_) {
    json entries = json::array();
    for (const Entry& e : r) entries.push_back(json::array({e.id, e.metric}));
    rungs.push_back(std::move(entries));
  }
  json trials = json::object();
  for (const auto& [id, t] : trials_) {
    trials[id] = json::array(
        {t.rung, t.stopped, t.exited, t.invalid, t.released, t.reached, t.counted_done});
  }
  return json{{"rungs", std::move(rungs)},
              {"trials", std::move(trials)},
              {"invalid", invalid_},
              {"reached", reached_},
              {"finished", finished_}};
}

Status AshaStoppingMethod::Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) {
  const json& rungs = snapshot.at("rungs");
  if (rungs.size() != rungs_.size()) {
    return InvalidArgument("invalid searcher snapshot: rung count differs from the config");
  }
  std::vector<std::vector<Entry>> restored(rungs_.size());
  for (size_t i = 0; i < rungs.size(); ++i) {
    for (const json& e : rungs[i]) {
      restored[i].push_back(Entry{e.at(0).get<std::string>(), e.at(1).get<double>()});
    }
  }
  std::map<std::string, Trial> trials;
  for (const auto& [id, a] : snapshot.at("trials").items()) {
    Trial t;
    t.rung = a.at(0).get<int>();
    t.stopped = a.at(1).get<bool>();
    t.exited = a.at(2).get<bool>();
    t.invalid = a.at(3).get<bool>();
    t.released = a.at(4).get<bool>();
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
