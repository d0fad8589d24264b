#include "master/searcher/grid_search.h"

#include <algorithm>
#include <cmath>

#include "master/searcher/create_action.h"

namespace det::master::searcher {

namespace {

using config::Hyperparameter;
using nlohmann::json;

constexpr uint64_t kMaxGridSize = uint64_t{1} << 53;

Status AxisValues(const std::string& path, const Hyperparameter& hp, std::vector<json>* out) {
  switch (hp.type) {
    case Hyperparameter::Type::kConst:
      out->push_back(hp.val);
      return Status::Ok();
    case Hyperparameter::Type::kCategorical:
      *out = hp.vals;
      return Status::Ok();
    case Hyperparameter::Type::kNested:
      return Status::Ok();  // handled by the caller
    default:
      break;
  }
  if (!hp.count) {
    return InvalidArgument("hyperparameters." + path + ".count: required for grid search");
  }
  if (*hp.count < 1) {
    return InvalidArgument("hyperparameters." + path + ".count: must be >= 1");
  }
  int64_t count = *hp.count;
  if (hp.type == Hyperparameter::Type::kInt) {
    auto lo = static_cast<int64_t>(hp.minval);
    auto hi = static_cast<int64_t>(hp.maxval);
    int64_t c = std::min(count, hi - lo + 1);
    if (c <= 1) {
      out->push_back(json(static_cast<int64_t>(std::round((hp.minval + hp.maxval) / 2.0))));
      return Status::Ok();
    }
    for (int64_t i = 0; i < c; ++i) {
      double v =
          static_cast<double>(lo) + static_cast<double>(i * (hi - lo)) / static_cast<double>(c - 1);
      out->push_back(json(static_cast<int64_t>(std::round(v))));
    }
    return Status::Ok();
  }
  if (count > 1000000) {
    return InvalidArgument("hyperparameters." + path + ".count: must be <= 1000000");
  }
  std::vector<double> xs;
  if (count == 1) {
    xs.push_back((hp.minval + hp.maxval) / 2);
  } else {
    for (int64_t i = 0; i < count; ++i) {
      xs.push_back(hp.minval + static_cast<double>(i) * (hp.maxval - hp.minval) /
                                   static_cast<double>(count - 1));
    }
  }
  for (double x : xs) {
    out->push_back(json(hp.type == Hyperparameter::Type::kLog ? std::pow(hp.base, x) : x));
  }
  return Status::Ok();
}

Status AddAxes(const config::Hyperparameters& hps, std::vector<std::string>* route,
               std::vector<GridAxis>* axes) {
  for (const auto& [name, hp] : hps) {  // std::map: byte-wise sorted
    route->push_back(name);
    if (hp.type == Hyperparameter::Type::kNested) {
      if (hp.nested.empty()) {
        axes->push_back(GridAxis{*route, {json::object()}});
      } else {
        DET_RETURN_IF_ERROR(AddAxes(hp.nested, route, axes));
      }
    } else {
      GridAxis axis{*route, {}};
      std::string path;
      for (const auto& r : *route) path += (path.empty() ? "" : ".") + r;
      DET_RETURN_IF_ERROR(AxisValues(path, hp, &axis.values));
      axes->push_back(std::move(axis));
    }
    route->pop_back();
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<GridAxis>> GridAxes(const config::Hyperparameters& hparams) {
  std::vector<GridAxis> axes;
  std::vector<std::string> route;
  DET_RETURN_IF_ERROR(AddAxes(hparams, &route, &axes));
  return axes;
}

Result<uint64_t> GridSize(const std::vector<GridAxis>& axes) {
  uint64_t size = 1;
  for (const GridAxis& axis : axes) {
    uint64_t n = axis.values.size();
    if (n == 0) return uint64_t{0};
    if (size > kMaxGridSize / n) {
      return InvalidArgument("hyperparameters: the grid has more than 2^53 points");
    }
    size *= n;
  }
  return size;
}

nlohmann::json GridPoint(const std::vector<GridAxis>& axes, uint64_t index) {
  json point = json::object();
  // Mixed radix with the LAST axis fastest.
  std::vector<size_t> digits(axes.size(), 0);
  for (size_t i = axes.size(); i-- > 0;) {
    uint64_t n = axes[i].values.size();
    digits[i] = static_cast<size_t>(index % n);
    index /= n;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    json* node = &point;
    const auto& route = axes[i].route;
    for (size_t k = 0; k + 1 < route.size(); ++k) {
      json& child = (*node)[route[k]];
      if (!child.is_object()) child = json::object();
      node = &child;
    }
    (*node)[route.back()] = axes[i].values[digits[i]];
  }
  return point;
}

GridMethod::GridMethod(std::vector<GridAxis> axes, uint64_t size,
                       std::optional<uint64_t> max_length, int64_t max_concurrent_trials)
    : axes_(std::move(axes)),
      size_(size),
      max_length_(max_length),
      max_concurrent_trials_(max_concurrent_trials) {}

CreateAction GridMethod::Next(SearchContext& ctx) {
  // Popped from the end of the lexicographic list.
  json hparams = GridPoint(axes_, size_ - 1 - next_);
  ++next_;
  CreateAction create = NewCreateActionWithHparams(std::move(hparams), ctx.rng);
  TrialHandle trial = ctx.ids.Add(create.request_id);
  if (trial >= state_.size()) state_.resize(trial + 1, State::kNotOurs);
  if (state_[trial] == State::kFinished) --finished_;
  if (state_[trial] != State::kRunning) Run(trial);
  return create;
}

void GridMethod::Run(TrialHandle trial) {
  state_[trial] = State::kRunning;
  running_.insert(trial);
}

bool GridMethod::Finish(TrialHandle trial) {
  if (trial >= state_.size() || state_[trial] == State::kNotOurs) return false;
  if (state_[trial] == State::kRunning) {
    state_[trial] = State::kFinished;
    running_.erase(trial);
    ++finished_;
  }
  return true;
}

std::vector<Action> GridMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> actions;
  uint64_t initial = size_;
  if (max_concurrent_trials_ > 0) {
    initial = std::min<uint64_t>(size_, static_cast<uint64_t>(max_concurrent_trials_));
  }
  for (uint64_t i = 0; i < initial; ++i)
    actions.emplace_back(std::in_place_type<CreateAction>, Next(ctx));
  return actions;
}

std::vector<Action> GridMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  std::vector<Action> actions;
  if (max_length_) {
    actions.emplace_back(
        std::in_place_type<ValidateAfterAction>,
        ValidateAfterAction{.request_id = std::string(ctx.ids.id(trial)), .length = *max_length_});
  }
  return actions;
}

Result<std::vector<Action>> GridMethod::ValidationCompleted(SearchContext& ctx, TrialHandle trial,
                                                            double metric, uint64_t length) {
  std::vector<Action> actions;
  if (trial >= state_.size() || state_[trial] != State::kRunning) return actions;
  Finish(trial);
  actions.emplace_back(std::in_place_type<CloseAction>,
                       CloseAction{.request_id = std::string(ctx.ids.id(trial))});
  return actions;
}

std::vector<Action> GridMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                 ExitedReason reason) {
  Finish(trial);
  return std::vector<Action>();
}

std::vector<Action> GridMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  std::vector<Action> actions;
  if (!Finish(trial)) return actions;
  if (next_ < size_) actions.emplace_back(std::in_place_type<CreateAction>, Next(ctx));
  return actions;
}

double GridMethod::Progress(const TrialUnits& units) const {
  if (size_ == 0) return 1;
  // Finished trials count 1 each; only the running ones are summed (rule 6).
  double sum = static_cast<double>(finished_);
  if (max_length_ && *max_length_ > 0) {
    for (TrialHandle trial : running_) {
      if (std::optional<double> u = units.Of(trial)) {
        sum += std::clamp(*u / static_cast<double>(*max_length_), 0.0, 1.0);
      }
    }
  }
  return sum / static_cast<double>(size_);
}

nlohmann::json GridMethod::Snapshot(const RequestIdIndex& ids) const {
  json finished = json::object();  // ordered by request id
  for (TrialHandle t = 0; t < state_.size(); ++t) {
    if (state_[t] != State::kNotOurs)
      finished[std::string(ids.id(t))] = state_[t] == State::kFinished;
  }
  return json{{"next", next_}, {"finished", std::move(finished)}};
}

Status GridMethod::Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) {
  uint64_t next = snapshot.at("next").get<uint64_t>();
  auto finished = snapshot.at("finished").get<std::map<std::string, bool>>();
  std::vector<State> state(ids.size(), State::kNotOurs);
  for (const auto& [id, done] : finished) {
    TrialHandle trial = ids.Find(id);
    if (trial == kNoTrial) {
      return InvalidArgument("invalid searcher snapshot: grid state of unknown trial " + id);
    }
    state[trial] = done ? State::kFinished : State::kRunning;
  }
  next_ = next;
  state_ = std::move(state);
  running_.clear();
  finished_ = 0;
  for (TrialHandle t = 0; t < state_.size(); ++t) {
    if (state_[t] == State::kRunning) running_.insert(t);
    if (state_[t] == State::kFinished) ++finished_;
  }
  return Status::Ok();
}

}  // namespace det::master::searcher
