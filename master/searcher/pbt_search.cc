#include "master/searcher/pbt_search.h"

#include <algorithm>
#include <cmath>

#include "master/searcher/create_action.h"
#include "master/searcher/hparam_sampling.h"

namespace det::master::searcher {

namespace {

using config::Hyperparameter;
using nlohmann::json;

}  // namespace

nlohmann::json PbtExplore(const config::Hyperparameters& space, const nlohmann::json& old,
                          double resample_probability, double perturb_factor, NpRand& rng) {
  json out = old.is_object() ? old : json::object();
  for (const auto& [name, hp] : space) {
    if (rng.UnitInterval() < resample_probability) {
      config::Hyperparameters one{{name, hp}};
      out[name] = SampleHyperparameters(one, rng)[name];
      continue;
    }
    bool dec = rng.UnitInterval() < 0.5;
    double mult = dec ? 1 - perturb_factor : 1 + perturb_factor;
    auto it = old.is_object() ? old.find(name) : old.end();
    if (!old.is_object() || it == old.end() || !it->is_number()) continue;
    double v = it->get<double>();
    switch (hp.type) {
      case Hyperparameter::Type::kInt: {
        double x = dec ? std::floor(v * mult) : std::ceil(v * mult);
        x = std::clamp(x, hp.minval, hp.maxval);
        out[name] = static_cast<int64_t>(x);
        break;
      }
      case Hyperparameter::Type::kDouble:
        out[name] = std::clamp(v * mult, hp.minval, hp.maxval);
        break;
      case Hyperparameter::Type::kLog:
        out[name] =
            std::clamp(v * mult, std::pow(hp.base, hp.minval), std::pow(hp.base, hp.maxval));
        break;
      default:
        break;  // const, categorical and nested are kept
    }
  }
  return out;
}

PbtMethod::PbtMethod(int64_t population_size, int64_t num_rounds, uint64_t length_per_round,
                     double truncate_fraction, double resample_probability, double perturb_factor,
                     bool smaller_is_better)
    : population_size_(population_size),
      num_rounds_(num_rounds),
      length_per_round_(length_per_round),
      truncate_fraction_(truncate_fraction),
      resample_probability_(resample_probability),
      perturb_factor_(perturb_factor),
      smaller_is_better_(smaller_is_better) {}

std::vector<Action> PbtMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> actions;
  for (int64_t i = 0; i < population_size_; ++i) {
    CreateAction create = NewCreateAction(ctx.hparams, ctx.rng);
    Trial& t = trials_[create.request_id];
    t.hparams = create.hparams;
    Await(create.request_id, t);
    actions.emplace_back(std::in_place_type<CreateAction>, std::move(create));
  }
  return actions;
}

std::vector<Action> PbtMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || !it->second.awaiting || it->second.exited) return actions;
  actions.emplace_back(std::in_place_type<ValidateAfterAction>,
                       ValidateAfterAction{.request_id = id, .length = length_per_round_});
  return actions;
}

void PbtMethod::Await(const std::string& id, Trial& t) {
  t.awaiting = true;
  awaiting_[id] = t.rounds_done;
}

void PbtMethod::Record(const std::string& id, double metric) {
  Trial& t = trials_[id];
  t.awaiting = false;
  awaiting_.erase(id);
  t.rounds_done++;
  metrics_[id] = metric;
  ++results_;
}

void PbtMethod::RunRounds(SearchContext& ctx, std::vector<Action>* actions) {
  while (!done_ && static_cast<int64_t>(metrics_.size()) >= population_size_) {
    ++rounds_;
    if (rounds_ >= num_rounds_) {
      done_ = true;
      metrics_.clear();
      awaiting_.clear();
      for (auto& [id, t] : trials_) {
        if (t.closed) continue;
        t.closed = true;
        t.awaiting = false;
        if (!t.exited) {
          actions->emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
        }
      }
      return;
    }
    auto k = static_cast<int64_t>(truncate_fraction_ * static_cast<double>(population_size_));
    std::vector<std::pair<double, std::string>> order;
    order.reserve(metrics_.size());
    for (const auto& [id, m] : metrics_) order.emplace_back(m, id);
    std::sort(order.begin(), order.end());
    metrics_.clear();
    auto size = static_cast<int64_t>(order.size());
    k = std::min(k, size / 2);
    for (int64_t i = size - k; i < size; ++i) {
      Trial& t = trials_[order[static_cast<size_t>(i)].second];
      t.closed = true;
      if (!t.exited) {
        actions->emplace_back(std::in_place_type<CloseAction>,
                              CloseAction{.request_id = order[static_cast<size_t>(i)].second});
      }
    }
    for (int64_t i = 0; i < k; ++i) {
      const std::string& parent = order[static_cast<size_t>(i)].second;
      json hparams = PbtExplore(ctx.hparams, trials_[parent].hparams, resample_probability_,
                                perturb_factor_, ctx.rng);
      CreateAction create = NewCreateActionWithHparams(std::move(hparams), ctx.rng);
      create.parent_request_id = parent;
      Trial& child = trials_[create.request_id];
      child.hparams = create.hparams;
      Await(create.request_id, child);
      actions->emplace_back(std::in_place_type<CreateAction>, std::move(create));
    }
    for (int64_t i = 0; i < size - k; ++i) {
      const std::string& id = order[static_cast<size_t>(i)].second;
      Trial& t = trials_[id];
      if (t.exited) {
        Record(id, kWorstMetric);
      } else {
        Await(id, t);
        actions->emplace_back(
            std::in_place_type<ValidateAfterAction>,
            ValidateAfterAction{
                .request_id = id,
                .length = length_per_round_ * static_cast<uint64_t>(t.rounds_done + 1)});
      }
    }
  }
}

Result<std::vector<Action>> PbtMethod::ValidationCompleted(SearchContext& ctx, TrialHandle trial,
                                                           double metric, uint64_t length) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end()) return NotFound("no trial with request id " + id);
  Trial& t = it->second;
  if (!t.awaiting || t.exited ||
      length != length_per_round_ * static_cast<uint64_t>(t.rounds_done + 1)) {
    return InvalidArgument("trial " + id + " owes no validation at length " +
                           std::to_string(length));
  }
  Record(id, smaller_is_better_ ? metric : -metric);
  RunRounds(ctx, &actions);
  return actions;
}

std::vector<Action> PbtMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                ExitedReason reason) {
  const std::string id(ctx.ids.id(trial));
  std::vector<Action> actions;
  auto it = trials_.find(id);
  if (it == trials_.end() || it->second.exited) return actions;
  Trial& t = it->second;
  t.exited = true;
  if (t.closed || !t.awaiting) return actions;
  Record(id, kWorstMetric);
  RunRounds(ctx, &actions);
  return actions;
}

std::vector<Action> PbtMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  const std::string id(ctx.ids.id(trial));
  auto it = trials_.find(id);
  if (it == trials_.end()) return std::vector<Action>();
  if (!it->second.exited && !it->second.closed) {
    return TrialExitedEarly(ctx, trial, ExitedReason::kUserRequestedStop);
  }
  it->second.exited = true;
  return std::vector<Action>();
}

double PbtMethod::Progress(const TrialUnits& units) const {
  double total = static_cast<double>(population_size_) * static_cast<double>(num_rounds_);
  if (total <= 0 || done_) return 1;
  double partial = 0;
  auto lpr = static_cast<double>(length_per_round_);
  for (const auto& [id, rounds_done] : awaiting_) {
    std::optional<double> u = units.Of(id);
    if (!u) continue;
    double base = lpr * static_cast<double>(rounds_done);
    partial += std::clamp((*u - base) / lpr, 0.0, 1.0);
  }
  return std::min(1.0, (static_cast<double>(results_) + partial) / total);
}

nlohmann::json PbtMethod::Snapshot(const RequestIdIndex& ids) const {
  json trials = json::object();
  for (const auto& [id, t] : trials_) {
    trials[id] = json{{"hparams", t.hparams},
                      {"rounds_done", t.rounds_done},
                      {"awaiting", t.awaiting},
                      {"exited", t.exited},
                      {"closed", t.closed}};
  }
  return json{{"trials", std::move(trials)},
              {"metrics", metrics_},
              {"rounds", rounds_},
              {"results", results_},
              {"done", done_}};
}

Status PbtMethod::Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) {
  std::map<std::string, Trial> trials;
  for (const auto& [id, a] : snapshot.at("trials").items()) {
    Trial t;
    t.hparams = a.at("hparams");
    t.rounds_done = a.at("rounds_done").get<int64_t>();
    t.awaiting = a.at("awaiting").get<bool>();
    t.exited = a.at("exited").get<bool>();
    t.closed = a.at("closed").get<bool>();
    trials.emplace(id, std::move(t));
  }
  metrics_ = snapshot.at("metrics").get<std::map<std::string, double>>();
  trials_ = std::move(trials);
  awaiting_.clear();
  for (const auto& [id, t] : trials_) {
    if (t.awaiting) awaiting_[id] = t.rounds_done;
  }
  rounds_ = snapshot.at("rounds").get<int64_t>();
  results_ = snapshot.at("results").get<int64_t>();
  done_ = snapshot.at("done").get<bool>();
  return Status::Ok();
}

}  // namespace det::master::searcher
