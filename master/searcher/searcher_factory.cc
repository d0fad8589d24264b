// Searcher::Create / Searcher::Restore: picks the search method by `searcher.name` and builds it
// from the typed config plus the method fields of `config.defaulted["searcher"]`.

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>

#include "master/searcher/asha_promotion.h"
#include "master/searcher/asha_stopping.h"
#include "master/searcher/bracket_math.h"
#include "master/searcher/grid_search.h"
#include "master/searcher/method_params.h"
#include "master/searcher/method_searcher.h"
#include "master/searcher/pbt_search.h"
#include "master/searcher/random_search.h"
#include "master/searcher/searcher.h"
#include "master/searcher/sync_halving.h"
#include "master/searcher/tournament.h"
#include "master/searcher/tpe_search.h"

namespace det::master::searcher {

namespace {

std::unique_ptr<SearchMethod> MakeAsha(const MethodParams& p, int num_rungs, int64_t max_trials,
                                       int64_t mct) {
  if (p.TimeMode()) {
    return std::make_unique<AshaStoppingMethod>(AshaStoppingMethod::Mode::kTime, num_rungs,
                                                *p.max_time, p.divisor, max_trials, mct,
                                                p.smaller_is_better, p.metric, p.time_metric);
  }
  auto max_length = static_cast<double>(*p.max_length);
  if (p.stop_once) {
    return std::make_unique<AshaStoppingMethod>(AshaStoppingMethod::Mode::kOperations, num_rungs,
                                                max_length, p.divisor, max_trials, mct,
                                                p.smaller_is_better, p.metric, p.time_metric);
  }
  return std::make_unique<AshaPromotionMethod>(num_rungs, *p.max_length, p.divisor, max_trials, mct,
                                               p.smaller_is_better);
}

std::vector<int> SortedDescending(std::vector<int> rungs) {
  std::sort(rungs.begin(), rungs.end(), std::greater<int>());
  return rungs;
}

TpeOptions TpeOptionsOf(const MethodParams& p) {
  TpeOptions o;
  o.max_trials = p.max_trials;
  o.max_concurrent_trials = p.max_concurrent_trials;
  o.max_length = p.max_length.value_or(1);
  o.smaller_is_better = p.smaller_is_better;
  o.n_startup_trials = p.n_startup_trials;
  o.n_ei_candidates = p.n_ei_candidates;
  o.constant_liar = p.constant_liar;
  o.parzen.prior_weight = p.prior_weight;
  o.parzen.consider_magic_clip = p.consider_magic_clip;
  o.parzen.consider_endpoints = p.consider_endpoints;
  if (p.median_stopping) {
    o.stopping.check_every = p.check_every;
    o.stopping.n_startup_trials = p.stop_n_startup_trials;
    o.stopping.n_warmup_steps = p.n_warmup_steps;
    o.stopping.interval_steps = p.interval_steps;
    o.stopping.n_min_trials = p.n_min_trials;
  }
  return o;
}

Result<std::unique_ptr<SearchMethod>> MakeMethod(const config::ExperimentConfig& config) {
  DET_ASSIGN_OR_RETURN(MethodParams p, ReadMethodParams(config));
  const std::string& name = p.name;
  if (name == "grid") {
    DET_ASSIGN_OR_RETURN(std::vector<GridAxis> axes, GridAxes(config.hyperparameters));
    DET_ASSIGN_OR_RETURN(uint64_t size, GridSize(axes));
    return std::unique_ptr<SearchMethod>(
        std::make_unique<GridMethod>(std::move(axes), size, p.max_length, p.max_concurrent_trials));
  }
  if (name == "async_halving") {
    return MakeAsha(p, p.num_rungs, p.max_trials, p.max_concurrent_trials);
  }
  if (name == "adaptive_asha") {
    double max_units = p.TimeMode() ? *p.max_time : static_cast<double>(*p.max_length);
    DET_ASSIGN_OR_RETURN(std::vector<AshaBracket> plan,
                         MakeAshaBrackets(p.mode, p.max_rungs, p.bracket_rungs, max_units,
                                          p.max_trials, p.max_concurrent_trials, p.divisor));
    std::vector<std::unique_ptr<SearchMethod>> brackets;
    for (const AshaBracket& b : plan) {
      brackets.push_back(MakeAsha(p, b.num_rungs, b.max_trials, b.max_concurrent_trials));
    }
    return std::unique_ptr<SearchMethod>(std::make_unique<TournamentMethod>(std::move(brackets)));
  }
  if (name == "adaptive") {
    std::vector<int> rungs = p.bracket_rungs;
    if (rungs.empty()) {
      DET_ASSIGN_OR_RETURN(rungs, ModeRungCounts(p.mode, p.max_rungs));
    }
    rungs = SortedDescending(std::move(rungs));
    uint64_t budget = p.budget / rungs.size();
    std::vector<std::unique_ptr<SearchMethod>> brackets;
    for (int r : rungs) {
      brackets.push_back(std::make_unique<SyncHalvingMethod>(
          SyncHalvingRungsForBudget(r, *p.max_length, budget, p.divisor), p.smaller_is_better));
    }
    return std::unique_ptr<SearchMethod>(std::make_unique<TournamentMethod>(std::move(brackets)));
  }
  if (name == "adaptive_simple") {
    DET_ASSIGN_OR_RETURN(std::vector<int> rungs, ModeRungCounts(p.mode, p.max_rungs));
    rungs = SortedDescending(std::move(rungs));
    auto b = static_cast<int64_t>(rungs.size());
    std::vector<std::unique_ptr<SearchMethod>> brackets;
    for (int64_t i = 0; i < b; ++i) {
      int64_t n = std::max<int64_t>(p.max_trials / b + (i < p.max_trials % b ? 1 : 0), 1);
      brackets.push_back(std::make_unique<SyncHalvingMethod>(
          SyncHalvingRungsForTrials(rungs[static_cast<size_t>(i)], *p.max_length, n, p.divisor),
          p.smaller_is_better));
    }
    return std::unique_ptr<SearchMethod>(std::make_unique<TournamentMethod>(std::move(brackets)));
  }
  if (name == "pbt") {
    return std::unique_ptr<SearchMethod>(std::make_unique<PbtMethod>(
        p.population_size, p.num_rounds, p.length_per_round, p.truncate_fraction,
        p.resample_probability, p.perturb_factor, p.smaller_is_better));
  }
  if (name == "tpe" || name == "random") {  // random: only with `stopping` (RandomSearcher)
    TpeOptions o = TpeOptionsOf(p);
    if (name == "random") o.n_startup_trials = std::numeric_limits<int64_t>::max();
    return std::unique_ptr<SearchMethod>(std::make_unique<TpeMethod>(o));
  }
  return Unimplemented("searcher '" + name + "' is not supported");
}

// The method behind the searcher, with a tpe sampler when the config asks for one.
Result<std::unique_ptr<MethodSearcher>> MakeMethodSearcher(const config::ExperimentConfig& config) {
  DET_ASSIGN_OR_RETURN(MethodParams p, ReadMethodParams(config));
  DET_ASSIGN_OR_RETURN(std::unique_ptr<SearchMethod> method, MakeMethod(config));
  auto searcher = std::make_unique<MethodSearcher>(config, std::move(method));
  if (p.sampler == "tpe") searcher->UseTpeSampler(TpeOptionsOf(p));
  return searcher;
}

// single and random run as RandomSearcher, except random with a `stopping` block, which needs
// several validations per trial (TpeMethod with nothing modelled).
bool PlainRandom(const config::ExperimentConfig& config) {
  const std::string& name = config.searcher.name;
  if (name == "single") return true;
  if (name != "random") return false;
  const nlohmann::json& s = config.defaulted.is_object() && config.defaulted.contains("searcher")
                                ? config.defaulted.at("searcher")
                                : nlohmann::json::object();
  return !s.is_object() || !s.contains("stopping") || s.at("stopping").is_null();
}

}  // namespace

Result<std::unique_ptr<Searcher>> Searcher::Create(const config::ExperimentConfig& config) {
  const std::string& name = config.searcher.name;
  if (PlainRandom(config)) {
    if (name == "random" && config.searcher.max_trials < 1) {
      return InvalidArgument("searcher.max_trials: must be > 0");
    }
    return std::unique_ptr<Searcher>(std::make_unique<RandomSearcher>(config));
  }
  if (name == "random" && config.searcher.max_trials < 1) {
    return InvalidArgument("searcher.max_trials: must be > 0");
  }
  DET_ASSIGN_OR_RETURN(std::unique_ptr<MethodSearcher> searcher, MakeMethodSearcher(config));
  return std::unique_ptr<Searcher>(std::move(searcher));
}

Result<std::unique_ptr<Searcher>> Searcher::Restore(const config::ExperimentConfig& config,
                                                    const nlohmann::json& snapshot) {
  if (PlainRandom(config)) {
    auto searcher = std::make_unique<RandomSearcher>(config);
    DET_RETURN_IF_ERROR(searcher->LoadSnapshot(snapshot));
    return std::unique_ptr<Searcher>(std::move(searcher));
  }
  DET_ASSIGN_OR_RETURN(std::unique_ptr<MethodSearcher> searcher, MakeMethodSearcher(config));
  DET_RETURN_IF_ERROR(searcher->LoadSnapshot(snapshot));
  return std::unique_ptr<Searcher>(std::move(searcher));
}

}  // namespace det::master::searcher
