#include "master/searcher/tpe_search.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <string>

#include "master/searcher/create_action.h"
#include "master/searcher/hparam_sampling.h"

namespace det::master::searcher {

namespace {

using config::Hyperparameter;
using nlohmann::json;

// The below and above groups of one leaf: values (or choice indices) in creation order.
template <typename T>
struct Groups {
  std::vector<T> below, above;
};

// A leaf's value in an observation's hparams, or nullptr when absent.
const json* Leaf(const json& hparams, const std::vector<std::string>& path) {
  const json* at = &hparams;
  for (const std::string& key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

class Suggester {
 public:
  Suggester(const std::vector<TpeObservation>& observations, const TpeOptions& options, NpRand& rng)
      : options_(options), rng_(rng) {
    // Rule 3's split: by loss (running trials last, as the worst), ties by creation order.
    std::vector<size_t> ranked;
    for (size_t i = 0; i < observations.size(); ++i) {
      if (observations[i].loss || options.constant_liar) ranked.push_back(i);
    }
    auto key = [&](size_t i) {
      return std::make_pair(observations[i].depth,
                            observations[i].loss.value_or(std::numeric_limits<double>::infinity()));
    };
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](size_t a, size_t b) { return key(a) < key(b); });
    size_t n_below = std::min<size_t>(
        static_cast<size_t>(std::ceil(0.1 * static_cast<double>(ranked.size()))), 25);
    std::vector<size_t> below(ranked.begin(), ranked.begin() + static_cast<long>(n_below));
    std::vector<size_t> above(ranked.begin() + static_cast<long>(n_below), ranked.end());
    std::sort(below.begin(), below.end());  // creation order: the newest weigh most
    std::sort(above.begin(), above.end());
    for (size_t i : below) below_.push_back(observations[i].hparams);
    for (size_t i : above) above_.push_back(observations[i].hparams);
  }

  json Suggest(const config::Hyperparameters& space, std::vector<std::string>* path) {
    json out = json::object();
    for (const auto& [name, hp] : space) {
      path->push_back(name);
      out[name] = One(hp, path);
      path->pop_back();
    }
    return out;
  }

 private:
  json One(const Hyperparameter& hp, std::vector<std::string>* path) {
    switch (hp.type) {
      case Hyperparameter::Type::kConst:
        return hp.val;
      case Hyperparameter::Type::kNested:
        return Suggest(hp.nested, path);
      case Hyperparameter::Type::kCategorical:
        return Categorical(hp, *path);
      case Hyperparameter::Type::kInt:
      case Hyperparameter::Type::kDouble:
      case Hyperparameter::Type::kLog:
        return Numeric(hp, *path);
    }
    return json(nullptr);
  }

  // The value of a numeric leaf in the estimator's coordinates (rule 4), if it has one.
  static std::optional<double> Coordinate(const Hyperparameter& hp, const json* v) {
    if (v == nullptr || !v->is_number()) return std::nullopt;
    double x = v->get<double>();
    if (hp.type == Hyperparameter::Type::kLog) {
      if (!(x > 0) || !(hp.base > 0) || hp.base == 1) return std::nullopt;
      x = std::log(x) / std::log(hp.base);
    }
    if (!std::isfinite(x)) return std::nullopt;
    return x;
  }

  json Numeric(const Hyperparameter& hp, const std::vector<std::string>& path) {
    const bool is_int = hp.type == Hyperparameter::Type::kInt;
    double low = hp.minval, high = hp.maxval;
    if (is_int) {
      low -= 0.5;
      high += 0.5;
    }
    if (!(high > low)) return Value(hp, hp.minval);
    Groups<double> g;
    auto collect = [&](const std::vector<const json*>& from, std::vector<double>* to) {
      for (const json* h : from) {
        if (std::optional<double> x = Coordinate(hp, Leaf(*h, path))) {
          to->push_back(std::clamp(*x, low, high));
        }
      }
    };
    collect(below_, &g.below);
    collect(above_, &g.above);
    NumericParzen l(g.below, TpeObservationWeights(g.below.size()), low, high, options_.parzen);
    NumericParzen a(g.above, TpeObservationWeights(g.above.size()), low, high, options_.parzen);
    double best = 0, best_score = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < std::max<int64_t>(options_.n_ei_candidates, 1); ++i) {
      double x = l.Sample(rng_);
      double score;
      if (is_int) {
        x = std::clamp(std::round(x), hp.minval, hp.maxval);
        score = l.LogMass(x - 0.5, x + 0.5) - a.LogMass(x - 0.5, x + 0.5);
      } else {
        score = l.LogPdf(x) - a.LogPdf(x);
      }
      if (score > best_score) {
        best_score = score;
        best = x;
      }
    }
    return Value(hp, best);
  }

  static json Value(const Hyperparameter& hp, double x) {
    switch (hp.type) {
      case Hyperparameter::Type::kInt:
        return json(static_cast<int64_t>(std::llround(std::clamp(x, hp.minval, hp.maxval))));
      case Hyperparameter::Type::kLog:
        return json(std::pow(hp.base, std::clamp(x, hp.minval, hp.maxval)));
      default:
        return json(std::clamp(x, hp.minval, hp.maxval));
    }
  }

  json Categorical(const Hyperparameter& hp, const std::vector<std::string>& path) {
    if (hp.vals.empty()) return json(nullptr);
    const int choices = static_cast<int>(hp.vals.size());
    Groups<int> g;
    auto collect = [&](const std::vector<const json*>& from, std::vector<int>* to) {
      for (const json* h : from) {
        const json* v = Leaf(*h, path);
        if (v == nullptr) continue;
        auto it = std::find(hp.vals.begin(), hp.vals.end(), *v);
        if (it != hp.vals.end()) to->push_back(static_cast<int>(it - hp.vals.begin()));
      }
    };
    collect(below_, &g.below);
    collect(above_, &g.above);
    CategoricalParzen l(g.below, TpeObservationWeights(g.below.size()), choices, options_.parzen);
    CategoricalParzen a(g.above, TpeObservationWeights(g.above.size()), choices, options_.parzen);
    int best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < std::max<int64_t>(options_.n_ei_candidates, 1); ++i) {
      int c = l.Sample(rng_);
      double score = l.LogPmf(c) - a.LogPmf(c);
      if (score > best_score) {
        best_score = score;
        best = c;
      }
    }
    return hp.vals[static_cast<size_t>(best)];
  }

  const TpeOptions& options_;
  NpRand& rng_;
  std::vector<const json*> below_, above_;
};

constexpr uint8_t kStates = 6;

const char* StateName(uint8_t s) {
  static const char* kNames[kStates] = {"", "running", "completed", "ended", "replaced", "stopped"};
  return s < kStates ? kNames[s] : "";
}

// np.nanpercentile(values, 50): the middle value, or the mean of the two middle ones.
double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

json SuggestTpe(const config::Hyperparameters& space,
                const std::vector<TpeObservation>& observations, const TpeOptions& options,
                NpRand& rng) {
  Suggester s(observations, options, rng);
  std::vector<std::string> path;
  return s.Suggest(space, &path);
}

TpeMethod::Trial* TpeMethod::Ours(TrialHandle trial) {
  if (trial >= trials_.size() || trials_[trial].state == State::kNotOurs) return nullptr;
  return &trials_[trial];
}

CreateAction TpeMethod::Next(SearchContext& ctx) {
  json hparams;
  if (completed_ < options_.n_startup_trials) {
    hparams = SampleHyperparameters(ctx.hparams, ctx.rng);  // as random search draws them
  } else {
    std::vector<const Trial*> by_seq;
    for (const Trial& t : trials_) {
      if (t.state == State::kCompleted || t.state == State::kStopped ||
          t.state == State::kRunning) {
        by_seq.push_back(&t);
      }
    }
    std::sort(by_seq.begin(), by_seq.end(),
              [](const Trial* a, const Trial* b) { return a->seq < b->seq; });
    std::vector<TpeObservation> observations;
    observations.reserve(by_seq.size());
    for (const Trial* t : by_seq) {
      std::optional<double> loss = t->state == State::kRunning ? std::nullopt : t->loss;
      observations.push_back({&t->hparams, loss, -static_cast<double>(t->reached)});
    }
    hparams = SuggestTpe(ctx.hparams, observations, options_, ctx.rng);
  }
  CreateAction create = NewCreateActionWithHparams(hparams, ctx.rng);
  TrialHandle h = ctx.ids.Add(create.request_id);
  if (h >= trials_.size()) trials_.resize(h + 1);
  Trial& t = trials_[h];
  t.state = State::kRunning;
  t.seq = next_seq_++;
  t.hparams = std::move(hparams);
  ++created_;
  return create;
}

bool TpeMethod::Finish(TrialHandle trial, State to) {
  Trial* t = Ours(trial);
  if (t == nullptr || t->state != State::kRunning) return false;
  t->state = to;
  return true;
}

std::vector<Action> TpeMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> actions;
  int64_t initial = options_.max_trials;
  if (options_.max_concurrent_trials > 0) {
    initial = std::min(initial, options_.max_concurrent_trials);
  }
  for (int64_t i = 0; i < initial; ++i) {
    actions.emplace_back(std::in_place_type<CreateAction>, Next(ctx));
  }
  return actions;
}

uint64_t TpeMethod::NextCheck(uint64_t after) const {
  if (options_.stopping.check_every == 0) return options_.max_length;
  return std::min(after + options_.stopping.check_every, options_.max_length);
}

bool TpeMethod::ShouldStop(const Trial& t, uint64_t length) const {
  const MedianStopping& s = options_.stopping;
  if (s.check_every == 0 || length < s.n_warmup_steps) return false;
  if (s.interval_steps > 1 && (length - s.n_warmup_steps) % s.interval_steps != 0) return false;
  std::vector<double> others;
  int64_t finished = 0;
  for (const Trial& o : trials_) {
    if (o.state != State::kCompleted) continue;
    ++finished;
    auto at = o.intermediate.find(length);
    if (at != o.intermediate.end()) others.push_back(at->second);
  }
  if (finished < s.n_startup_trials || others.empty() ||
      static_cast<int64_t>(others.size()) < s.n_min_trials) {
    return false;
  }
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [l, loss] : t.intermediate) {
    if (l <= length) best = std::min(best, loss);
  }
  return best > Median(std::move(others));
}

std::vector<Action> TpeMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  std::vector<Action> actions;
  if (Ours(trial) == nullptr) return actions;
  actions.emplace_back(
      std::in_place_type<ValidateAfterAction>,
      ValidateAfterAction{.request_id = std::string(ctx.ids.id(trial)), .length = NextCheck(0)});
  return actions;
}

Result<std::vector<Action>> TpeMethod::ValidationCompleted(SearchContext& ctx, TrialHandle trial,
                                                           double metric, uint64_t length) {
  std::vector<Action> actions;
  Trial* t = Ours(trial);
  if (t == nullptr || t->state != State::kRunning) return actions;
  const double loss = options_.smaller_is_better ? metric : -metric;
  const std::string id(ctx.ids.id(trial));
  t->reached = std::max(t->reached, length);
  if (options_.stopping.check_every > 0) t->intermediate[length] = loss;
  if (length >= options_.max_length || ShouldStop(*t, length)) {
    t->state = length >= options_.max_length ? State::kCompleted : State::kStopped;
    t->loss = loss;
    ++completed_;
    actions.emplace_back(std::in_place_type<CloseAction>, CloseAction{.request_id = id});
    return actions;
  }
  actions.emplace_back(std::in_place_type<ValidateAfterAction>,
                       ValidateAfterAction{.request_id = id, .length = NextCheck(length)});
  return actions;
}

std::vector<Action> TpeMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                ExitedReason reason) {
  bool invalid = reason == ExitedReason::kInvalidHp || reason == ExitedReason::kInitInvalidHp;
  if (Finish(trial, invalid ? State::kReplaced : State::kEnded) && invalid) --created_;
  return std::vector<Action>();
}

std::vector<Action> TpeMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  std::vector<Action> actions;
  if (Ours(trial) == nullptr) return actions;
  Finish(trial, State::kEnded);
  if (created_ < options_.max_trials) {
    actions.emplace_back(std::in_place_type<CreateAction>, Next(ctx));
  }
  return actions;
}

double TpeMethod::Progress(const TrialUnits& units) const {
  if (options_.max_trials <= 0) return 1;
  double sum = 0;
  for (TrialHandle h = 0; h < trials_.size(); ++h) {
    const Trial& t = trials_[h];
    if (t.state == State::kCompleted || t.state == State::kEnded || t.state == State::kStopped) {
      sum += 1;
    } else if (t.state == State::kRunning && options_.max_length > 0) {
      if (std::optional<double> u = units.Of(h)) {
        sum += std::clamp(*u / static_cast<double>(options_.max_length), 0.0, 1.0);
      }
    }
  }
  return sum / static_cast<double>(options_.max_trials);
}

json TpeMethod::Snapshot(const RequestIdIndex& ids) const {
  json trials = json::object();  // ordered by request id
  for (TrialHandle h = 0; h < trials_.size(); ++h) {
    const Trial& t = trials_[h];
    if (t.state == State::kNotOurs) continue;
    json j = {{"seq", t.seq},
              {"hparams", t.hparams},
              {"loss", t.loss ? json(*t.loss) : json(nullptr)},
              {"state", StateName(static_cast<uint8_t>(t.state))}};
    if (t.reached > 0) j["reached"] = t.reached;
    if (!t.intermediate.empty()) {
      json intermediate = json::object();
      for (const auto& [length, loss] : t.intermediate) {
        intermediate[std::to_string(length)] = loss;
      }
      j["intermediate"] = std::move(intermediate);
    }
    trials[std::string(ids.id(h))] = std::move(j);
  }
  return json{{"created", created_}, {"next_seq", next_seq_}, {"trials", std::move(trials)}};
}

Status TpeMethod::Restore(const json& snapshot, const RequestIdIndex& ids) {
  if (!snapshot.is_object() || !snapshot.contains("trials") || !snapshot["trials"].is_object()) {
    return InvalidArgument("invalid searcher snapshot: tpe state without trials");
  }
  std::vector<Trial> trials(ids.size());
  int64_t completed = 0;
  for (const auto& [id, j] : snapshot["trials"].items()) {
    TrialHandle h = ids.Find(id);
    if (h == kNoTrial) {
      return InvalidArgument("invalid searcher snapshot: tpe state of unknown trial " + id);
    }
    Trial& t = trials[h];
    std::string state = j.value("state", "");
    for (uint8_t s = 1; s < kStates; ++s) {
      if (state == StateName(s)) t.state = static_cast<State>(s);
    }
    if (t.state == State::kNotOurs) {
      return InvalidArgument("invalid searcher snapshot: tpe trial " + id + " has state '" + state +
                             "'");
    }
    t.seq = j.value("seq", int64_t{0});
    t.hparams = j.value("hparams", json::object());
    if (j.contains("loss") && j["loss"].is_number()) t.loss = j["loss"].get<double>();
    t.reached = j.value("reached", uint64_t{0});
    if (j.contains("intermediate")) {
      if (!j["intermediate"].is_object()) {
        return InvalidArgument("invalid searcher snapshot: tpe trial " + id +
                               " has intermediate metrics that are not a map");
      }
      for (const auto& [length, loss] : j["intermediate"].items()) {
        uint64_t l = 0;
        auto [end, err] = std::from_chars(length.data(), length.data() + length.size(), l);
        if (err != std::errc() || end != length.data() + length.size() || !loss.is_number()) {
          return InvalidArgument("invalid searcher snapshot: tpe trial " + id +
                                 " has a bad intermediate metric at '" + length + "'");
        }
        t.intermediate[l] = loss.get<double>();
      }
    }
    completed += t.state == State::kCompleted || t.state == State::kStopped;
  }
  trials_ = std::move(trials);
  created_ = snapshot.value("created", int64_t{0});
  next_seq_ = snapshot.value("next_seq", int64_t{0});
  completed_ = completed;
  return Status::Ok();
}

}  // namespace det::master::searcher
