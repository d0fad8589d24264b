#include "master/searcher/rung_view.h"

#include <algorithm>
#include <cmath>

#include "master/searcher/bracket_math.h"
#include "master/searcher/search_method.h"

namespace det::master::searcher {

using nlohmann::json;

namespace {

std::optional<double> MetricOf(const json& v, bool smaller_is_better) {
  // The methods keep metrics negated when larger is better; the worst metric (an early exit)
  // is kWorstMetric.
  if (!v.is_number()) return std::nullopt;
  double m = v.get<double>();
  if (!std::isfinite(m) || std::abs(m) >= kWorstMetric) return std::nullopt;
  return smaller_is_better ? m : -m;
}

// One bracket of promotion ASHA: entries [id, metric, promoted]; trials
// {id: [rung, awaiting, exited, closed, invalid, ...]}.
Status PromotionRungs(const json& snap, bool smaller_is_better, BracketView* out) {
  const json& rungs = snap.at("rungs");
  const json& trials = snap.at("trials");
  const int top = static_cast<int>(out->rungs.size()) - 1;
  for (int r = 0; r <= top; ++r) {
    RungLevelView& view = out->rungs[r];
    for (const json& e : rungs.at(r).at("entries")) {
      RungTrialView t;
      t.request_id = e.at(0).get<std::string>();
      t.metric = MetricOf(e.at(1), smaller_is_better);
      const json& st = trials.at(t.request_id);
      bool exited = st.at(2).get<bool>(), closed = st.at(3).get<bool>();
      // A closed trial's process ends too (exited), so exited alone does not tell an early
      // exit: the worst metric (no value) that an early exit leaves in the rung does.
      if (e.at(2).get<bool>()) {
        t.outcome = "promoted";
      } else if (r == top) {
        t.outcome = "completed";
      } else if (!t.metric && exited) {
        t.outcome = "exited";
      } else if (closed) {
        t.outcome = "stopped";
      } else if (exited) {
        t.outcome = "exited";
      } else {
        t.outcome = "waiting";
      }
      view.trials.push_back(std::move(t));
    }
  }
  // Trials that owe a validation at their rung are training towards it.
  for (const auto& [id, st] : trials.items()) {
    int rung = st.at(0).get<int>();
    bool awaiting = st.at(1).get<bool>(), invalid = st.at(4).get<bool>();
    if (awaiting && !invalid && rung >= 0 && rung <= top) {
      out->rungs[rung].trials.push_back(RungTrialView{id, std::nullopt, "running"});
    }
  }
  return Status::Ok();
}

// One bracket of stop-based ASHA: rungs [[id, metric], ...]; trials
// {id: [rung, stopped, exited, invalid, ...]}. A trial goes on past a rung unless stopped.
Status StoppingRungs(const json& snap, bool smaller_is_better, BracketView* out) {
  const json& rungs = snap.at("rungs");
  const json& trials = snap.at("trials");
  const int top = static_cast<int>(out->rungs.size()) - 1;
  for (int r = 0; r <= top; ++r) {
    for (const json& e : rungs.at(r)) {
      RungTrialView t;
      t.request_id = e.at(0).get<std::string>();
      t.metric = MetricOf(e.at(1), smaller_is_better);
      const json& st = trials.at(t.request_id);
      int rung = st.at(0).get<int>();
      bool stopped = st.at(1).get<bool>(), exited = st.at(2).get<bool>();
      if (r == top) {
        t.outcome = "completed";
      } else if (rung > r) {
        t.outcome = "promoted";
      } else if (!t.metric && exited) {
        t.outcome = "exited";
      } else if (stopped) {
        t.outcome = "stopped";
      } else if (exited) {
        t.outcome = "exited";
      } else {
        t.outcome = "waiting";
      }
      out->rungs[r].trials.push_back(std::move(t));
    }
  }
  for (const auto& [id, st] : trials.items()) {
    int rung = st.at(0).get<int>();
    bool stopped = st.at(1).get<bool>(), exited = st.at(2).get<bool>(),
         invalid = st.at(3).get<bool>();
    if (stopped || exited || invalid || rung < 0 || rung > top) continue;
    const std::vector<RungTrialView>& in = out->rungs[rung].trials;
    const std::string& request_id = id;  // clang 14 lambdas cannot capture structured bindings
    bool reported = std::any_of(in.begin(), in.end(),
                                [&](const RungTrialView& t) { return t.request_id == request_id; });
    if (!reported) out->rungs[rung].trials.push_back(RungTrialView{id, std::nullopt, "running"});
  }
  return Status::Ok();
}

void SortRung(RungLevelView& rung, bool smaller_is_better) {
  std::stable_sort(rung.trials.begin(), rung.trials.end(),
                   [&](const RungTrialView& a, const RungTrialView& b) {
                     if (a.metric.has_value() != b.metric.has_value()) return a.metric.has_value();
                     if (!a.metric) return false;
                     return smaller_is_better ? *a.metric < *b.metric : *a.metric > *b.metric;
                   });
}

}  // namespace

Result<std::vector<BracketView>> BuildRungViews(const MethodParams& p, const json& snapshot) {
  if (p.name != "adaptive_asha" && p.name != "async_halving") {
    return InvalidArgument("searcher.name: '" + p.name +
                           "' has no rungs (only adaptive_asha and async_halving)");
  }
  const double max_units =
      p.TimeMode() ? *p.max_time : static_cast<double>(p.max_length.value_or(0));
  std::vector<AshaBracket> plan;
  if (p.name == "adaptive_asha") {
    DET_ASSIGN_OR_RETURN(plan, MakeAshaBrackets(p.mode, p.max_rungs, p.bracket_rungs, max_units,
                                                p.max_trials, p.max_concurrent_trials, p.divisor));
  } else {
    plan.push_back(AshaBracket{p.num_rungs, p.max_trials, p.max_concurrent_trials});
  }
  const bool stopping = p.TimeMode() || p.stop_once;
  try {
    const json& method = snapshot.at("method");
    std::vector<const json*> snaps;
    if (p.name == "adaptive_asha") {
      for (const json& b : method.at("brackets")) snaps.push_back(&b);
    } else {
      snaps.push_back(&method);
    }
    if (snaps.size() != plan.size()) {
      return InvalidArgument("searcher snapshot has " + std::to_string(snaps.size()) +
                             " brackets, the config " + std::to_string(plan.size()));
    }
    std::vector<BracketView> out;
    for (size_t b = 0; b < plan.size(); ++b) {
      BracketView view;
      view.index = static_cast<int>(b);
      view.max_trials = plan[b].max_trials;
      std::vector<uint64_t> units = MakeRungUnits(plan[b].num_rungs, max_units, p.divisor);
      for (size_t r = 0; r < units.size(); ++r) {
        view.rungs.push_back(RungLevelView{static_cast<int>(r), units[r], {}});
      }
      if (snaps[b]->at("rungs").size() != units.size()) {
        return InvalidArgument("searcher snapshot: bracket " + std::to_string(b) + " has " +
                               std::to_string(snaps[b]->at("rungs").size()) +
                               " rungs, the config " + std::to_string(units.size()));
      }
      DET_RETURN_IF_ERROR(stopping ? StoppingRungs(*snaps[b], p.smaller_is_better, &view)
                                   : PromotionRungs(*snaps[b], p.smaller_is_better, &view));
      for (RungLevelView& r : view.rungs) SortRung(r, p.smaller_is_better);
      out.push_back(std::move(view));
    }
    return out;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("searcher snapshot: unexpected shape: ") + e.what());
  }
}

json RungViewsToJson(const std::vector<BracketView>& brackets) {
  json out = json::array();
  for (const BracketView& b : brackets) {
    json rungs = json::array();
    for (const RungLevelView& r : b.rungs) {
      json trials = json::array();
      for (const RungTrialView& t : r.trials) {
        trials.push_back({{"requestId", t.request_id},
                          {"metric", t.metric ? json(*t.metric) : json(nullptr)},
                          {"outcome", t.outcome}});
      }
      rungs.push_back({{"index", r.index}, {"length", r.length}, {"trials", std::move(trials)}});
    }
    out.push_back({{"index", b.index}, {"maxTrials", b.max_trials}, {"rungs", std::move(rungs)}});
  }
  return out;
}

}  // namespace det::master::searcher
