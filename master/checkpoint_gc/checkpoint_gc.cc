#include "master/checkpoint_gc/checkpoint_gc.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace det::master::checkpoint_gc {
namespace {

// Orders by sign*metric ascending, nulls last, ties by id.
struct MetricLess {
  const std::vector<GcCheckpoint>* cps;
  double sign;
  bool operator()(size_t a, size_t b) const {
    const auto& x = (*cps)[a];
    const auto& y = (*cps)[b];
    if (x.searcher_metric.has_value() != y.searcher_metric.has_value()) {
      return x.searcher_metric.has_value();
    }
    if (x.searcher_metric && y.searcher_metric) {
      double mx = sign * *x.searcher_metric;
      double my = sign * *y.searcher_metric;
      if (mx != my) return mx < my;
    }
    return x.id < y.id;
  }
};

}  // namespace

std::vector<GcRanks> RankCheckpoints(const std::vector<GcCheckpoint>& checkpoints,
                                     const GcPolicy& policy) {
  std::vector<size_t> eligible;
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    if (checkpoints[i].report_time.has_value() && !checkpoints[i].keep) eligible.push_back(i);
  }
  const double sign = policy.smaller_is_better ? 1.0 : -1.0;
  MetricLess by_metric{&checkpoints, sign};

  std::map<size_t, GcRanks> ranks;
  for (size_t i : eligible) {
    GcRanks r;
    r.uuid = checkpoints[i].uuid;
    r.has_metric = checkpoints[i].searcher_metric.has_value();
    ranks[i] = r;
  }

  std::vector<size_t> all = eligible;
  std::stable_sort(all.begin(), all.end(), by_metric);
  for (size_t k = 0; k < all.size(); ++k) ranks[all[k]].experiment_rank = static_cast<int64_t>(k + 1);

  std::map<int64_t, std::vector<size_t>> per_trial;
  for (size_t i : eligible) per_trial[checkpoints[i].trial_id].push_back(i);
  for (auto& [trial, members] : per_trial) {
    std::vector<size_t> m = members;
    std::stable_sort(m.begin(), m.end(), by_metric);
    for (size_t k = 0; k < m.size(); ++k) ranks[m[k]].trial_rank = static_cast<int64_t>(k + 1);
    std::vector<size_t> latest = members;
    std::stable_sort(latest.begin(), latest.end(), [&](size_t a, size_t b) {
      const auto& x = checkpoints[a];
      const auto& y = checkpoints[b];
      if (x.steps_completed != y.steps_completed) return x.steps_completed > y.steps_completed;
      return x.id > y.id;
    });
    for (size_t k = 0; k < latest.size(); ++k) {
      ranks[latest[k]].trial_order_rank = static_cast<int64_t>(k + 1);
    }
  }

  std::vector<GcRanks> out;
  out.reserve(eligible.size());
  for (size_t i : eligible) {
    GcRanks r = ranks[i];
    const bool not_best = r.experiment_rank > policy.save_experiment_best &&
                          r.trial_rank > policy.save_trial_best;
    r.remove = (not_best || !r.has_metric) && r.trial_order_rank > policy.save_trial_latest;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> SelectCheckpointsToDelete(const std::vector<GcCheckpoint>& checkpoints,
                                                   const GcPolicy& policy) {
  std::map<std::string, bool> remove;
  for (const auto& r : RankCheckpoints(checkpoints, policy)) remove[r.uuid] = r.remove;
  std::vector<std::string> out;
  for (const auto& c : checkpoints) {
    auto it = remove.find(c.uuid);
    if (it != remove.end() && it->second && c.state != "DELETED") out.push_back(c.uuid);
  }
  return out;
}

namespace {

Status ReadCount(const nlohmann::json& storage, const char* key, int64_t* out) {
  if (!storage.is_object() || !storage.contains(key) || storage[key].is_null()) return Status::Ok();
  const auto& v = storage[key];
  if (!v.is_number_integer()) {
    return InvalidArgument(std::string("checkpoint_storage.") + key + " must be an integer");
  }
  if (v.get<int64_t>() < 0) {
    return InvalidArgument(std::string("checkpoint_storage.") + key + " must not be negative");
  }
  *out = v.get<int64_t>();
  return Status::Ok();
}

}  // namespace

Result<GcPolicy> PolicyFromExperimentConfig(const nlohmann::json& config) {
  GcPolicy p;
  if (!config.is_object()) return InvalidArgument("experiment config must be an object");
  const nlohmann::json empty = nlohmann::json::object();
  const auto& storage = config.contains("checkpoint_storage") ? config["checkpoint_storage"] : empty;
  for (auto [key, field] : {std::pair{"save_experiment_best", &p.save_experiment_best},
                            std::pair{"save_trial_best", &p.save_trial_best},
                            std::pair{"save_trial_latest", &p.save_trial_latest}}) {
    Status s = ReadCount(storage, key, field);
    if (!s.ok()) return s;
  }
  if (config.contains("searcher") && config["searcher"].is_object()) {
    const auto& s = config["searcher"];
    if (s.contains("smaller_is_better") && !s["smaller_is_better"].is_null()) {
      if (!s["smaller_is_better"].is_boolean()) {
        return InvalidArgument("searcher.smaller_is_better must be a boolean");
      }
      p.smaller_is_better = s["smaller_is_better"].get<bool>();
    }
  }
  if (config.contains("checkpoint_policy") && !config["checkpoint_policy"].is_null()) {
    const auto& cp = config["checkpoint_policy"];
    if (!cp.is_string() || (cp != "best" && cp != "all" && cp != "none")) {
      return InvalidArgument("checkpoint_policy must be one of best, all, none");
    }
    p.checkpoint_policy = cp.get<std::string>();
  }
  return p;
}

}  // namespace det::master::checkpoint_gc
