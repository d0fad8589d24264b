#include "master/searcher/simulate.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <set>

#include "master/searcher/bracket_math.h"
#include "master/searcher/method_params.h"

namespace det::master::searcher {

namespace {

using nlohmann::json;

double RadicalInverse(uint64_t n) {
  double inv = 0.5, out = 0;
  while (n > 0) {
    if (n & 1) out += inv;
    inv /= 2;
    n >>= 1;
  }
  return out;
}

class Driver {
 public:
  Driver(const config::ExperimentConfig& config, const SimulateOptions& options,
         std::unique_ptr<Searcher> searcher)
      : config_(config), options_(options), searcher_(std::move(searcher)),
        order_rng_(options.order_seed) {}

  Result<SimulateResult> Run(bool time_mode, std::vector<uint64_t> points) {
    DET_RETURN_IF_ERROR(Absorb("initial_operations", searcher_->InitialOperations()));
    if (time_mode) {
      DET_RETURN_IF_ERROR(RunTimeMode(points));
    } else {
      DET_RETURN_IF_ERROR(RunOperations());
    }
    return Finish();
  }

 private:
  struct Live {
    std::deque<uint64_t> ops;
    bool closed = false;
    bool exited = false;
    int64_t reports = 0;
  };

  double Metric(int64_t index, int64_t report) const {
    if (options_.metric_fn) return options_.metric_fn(index, report);
    switch (options_.metric) {
      case SimulatedMetric::kConstant:
        return 1.0;
      case SimulatedMetric::kTrialIndex:
        return static_cast<double>(index + 1);
      case SimulatedMetric::kSpread:
        return RadicalInverse(static_cast<uint64_t>(index + 1));
    }
    return 1.0;
  }

  Status AfterEvent(const std::string& what) {
    ++result_.events;
    if (result_.events > options_.max_events) {
      return Internal("simulation did not finish within " +
                      std::to_string(options_.max_events) + " events");
    }
    if (options_.transcript) options_.transcript->push_back("event " + what);
    if (options_.round_trip) {
      json snap = searcher_->Snapshot();
      std::string text = snap.dump();
      auto restored = Searcher::Restore(config_, json::parse(text));
      if (!restored.ok()) {
        return Internal("restore after " + what + " failed: " + restored.status().message());
      }
      std::string again = (*restored)->Snapshot().dump();
      if (again != text) return Internal("snapshot round trip differs after " + what);
      searcher_ = std::move(restored).value();
    }
    if (options_.clone) {
      std::string text = searcher_->Snapshot().dump();
      if (cloned_from_ && cloned_from_->Snapshot().dump() != cloned_from_text_) {
        return Internal("the searcher cloned before " + what + " changed with its copy");
      }
      std::unique_ptr<Searcher> copy = searcher_->Clone();
      if (copy->Snapshot().dump() != text) return Internal("clone differs after " + what);
      cloned_from_ = std::move(searcher_);
      cloned_from_text_ = std::move(text);
      searcher_ = std::move(copy);
    }
    if (options_.record_progress) result_.progress.push_back(searcher_->Progress());
    return Status::Ok();
  }

  // Applies an event's actions: Creates become trials, the rest is queued.
  Status Absorb(const std::string& what, std::vector<Action> actions) {
    DET_RETURN_IF_ERROR(AfterEvent(what));
    result_.decisions += static_cast<int64_t>(actions.size());
    for (Action& a : actions) {
      if (options_.transcript) options_.transcript->push_back(DescribeAction(a));
      queue_.push_back(std::move(a));
    }
    return Status::Ok();
  }

  Status Handle(Action action) {
    if (auto* c = std::get_if<CreateAction>(&action)) {
      auto index = static_cast<int64_t>(result_.trials.size());
      SimulatedTrial t;
      t.request_id = c->request_id;
      t.hparams = c->hparams;
      if (c->parent_request_id) {
        auto p = index_.find(*c->parent_request_id);
        if (p != index_.end()) t.parent = p->second;
      }
      result_.trials.push_back(std::move(t));
      index_[c->request_id] = index;
      live_.emplace_back();
      order_.push_back(index);
      return Absorb("trial_created " + c->request_id, searcher_->TrialCreated(c->request_id));
    }
    if (auto* v = std::get_if<ValidateAfterAction>(&action)) {
      auto it = index_.find(v->request_id);
      if (it == index_.end()) return Internal("validate_after for an unknown trial");
      Live& l = live_[static_cast<size_t>(it->second)];
      if (l.exited || l.closed) return Status::Ok();
      l.ops.push_back(v->length);
      if (options_.order_seed == 0) return Step(it->second);
      runnable_.insert(it->second);
      return Status::Ok();
    }
    if (auto* cl = std::get_if<CloseAction>(&action)) {
      auto it = index_.find(cl->request_id);
      if (it == index_.end()) return Internal("close for an unknown trial");
      Live& l = live_[static_cast<size_t>(it->second)];
      l.closed = true;
      l.ops.clear();
      runnable_.erase(it->second);
      if (time_mode_) return Status::Ok();  // the walking loop exits it
      return Exit(it->second, std::nullopt);
    }
    if (auto* s = std::get_if<ShutdownAction>(&action)) {
      ++result_.shutdowns;
      result_.shutdown = *s;
    }
    return Status::Ok();
  }

  Status Exit(int64_t index, std::optional<ExitedReason> reason) {
    Live& l = live_[static_cast<size_t>(index)];
    if (l.exited) return Status::Ok();
    l.exited = true;
    l.ops.clear();
    runnable_.erase(index);
    const std::string& id = result_.trials[static_cast<size_t>(index)].request_id;
    if (reason) {
      result_.trials[static_cast<size_t>(index)].exited_early = true;
      DET_RETURN_IF_ERROR(Absorb("trial_exited_early " + id, searcher_->TrialExitedEarly(id, *reason)));
    }
    return Absorb("trial_exited " + id, searcher_->TrialExited(id));
  }

  // Completes the first pending op of trial `index`.
  Status Step(int64_t index) {
    Live& l = live_[static_cast<size_t>(index)];
    if (l.ops.empty() || l.exited) return Status::Ok();
    uint64_t length = l.ops.front();
    l.ops.pop_front();
    if (l.ops.empty()) runnable_.erase(index);
    SimulatedTrial& t = result_.trials[static_cast<size_t>(index)];
    t.lengths.push_back(length);
    if (options_.exit_fn) {
      if (auto reason = options_.exit_fn(index, length)) return Exit(index, reason);
    }
    double metric = Metric(index, l.reports++);
    searcher_->SetTrialProgress(t.request_id, static_cast<double>(length));
    auto actions = searcher_->ValidationCompleted(t.request_id, metric, length);
    if (!actions.ok()) return actions.status();
    return Absorb("validation_completed " + t.request_id + " " + std::to_string(length),
                  std::move(actions).value());
  }

  Status Drain() {
    while (!queue_.empty()) {
      Action a = std::move(queue_.front());
      queue_.pop_front();
      DET_RETURN_IF_ERROR(Handle(std::move(a)));
    }
    return Status::Ok();
  }

  Status RunOperations() {
    for (;;) {
      DET_RETURN_IF_ERROR(Drain());
      if (!runnable_.empty()) {
        std::uniform_int_distribution<size_t> pick(0, runnable_.size() - 1);
        auto it = runnable_.begin();
        std::advance(it, static_cast<std::ptrdiff_t>(pick(order_rng_)));
        DET_RETURN_IF_ERROR(Step(*it));
        continue;
      }
      // Nothing owed: a live, unclosed trial with no op trains on its own and ends.
      bool exited = false;
      for (int64_t i : order_) {
        Live& l = live_[static_cast<size_t>(i)];
        if (l.exited) continue;
        ++result_.idle_exits;
        DET_RETURN_IF_ERROR(Exit(i, std::nullopt));
        exited = true;
        break;
      }
      if (!exited) return Status::Ok();
    }
  }

  Status RunTimeMode(const std::vector<uint64_t>& points) {
    time_mode_ = true;
    DET_RETURN_IF_ERROR(Drain());
    for (size_t next = 0; next < order_.size(); ++next) {
      int64_t index = order_[next];
      std::string id = result_.trials[static_cast<size_t>(index)].request_id;
      uint64_t last = 0;
      for (uint64_t point : points) {
        if (live_[static_cast<size_t>(index)].closed) break;
        last = point;
        double metric = Metric(index, live_[static_cast<size_t>(index)].reports++);
        json metrics{{config_.searcher.metric, metric}, {time_metric_, point}};
        auto actions = searcher_->ValidationMetricsReported(id, metrics);
        if (!actions.ok()) return actions.status();
        DET_RETURN_IF_ERROR(Absorb("validation_metrics " + id + " " + std::to_string(point),
                                   std::move(actions).value()));
        DET_RETURN_IF_ERROR(Drain());
      }
      result_.trials[static_cast<size_t>(index)].lengths = {last};
      DET_RETURN_IF_ERROR(Exit(index, std::nullopt));
      DET_RETURN_IF_ERROR(Drain());
    }
    return Status::Ok();
  }

  Result<SimulateResult> Finish() {
    std::map<uint64_t, int64_t> by_length;
    for (const SimulatedTrial& t : result_.trials) {
      uint64_t last = t.lengths.empty() ? 0 : t.lengths.back();
      by_length[last]++;
      result_.total_units += last;
    }
    for (const auto& [length, count] : by_length) {
      result_.outcomes.push_back(LengthCount{count, length});
    }
    return std::move(result_);
  }

 public:
  std::string time_metric_;

 private:
  const config::ExperimentConfig& config_;
  const SimulateOptions& options_;
  std::unique_ptr<Searcher> searcher_;
  std::unique_ptr<Searcher> cloned_from_;  // options_.clone: the previous event's searcher
  std::string cloned_from_text_;
  std::mt19937 order_rng_;
  SimulateResult result_;
  std::deque<Action> queue_;
  std::map<std::string, int64_t> index_;
  std::vector<Live> live_;
  std::vector<int64_t> order_;
  std::set<int64_t> runnable_;
  bool time_mode_ = false;
};

}  // namespace

std::map<std::string, int64_t> SimulateResult::Shapes() const {
  std::map<std::string, int64_t> shapes;
  for (const SimulatedTrial& t : trials) {
    std::string key;
    for (uint64_t l : t.lengths) key += (key.empty() ? "" : " ") + std::to_string(l);
    shapes[key]++;
  }
  return shapes;
}

Result<std::vector<LengthCount>> PreviewAsha(const config::ExperimentConfig& config) {
  DET_ASSIGN_OR_RETURN(MethodParams p, ReadMethodParams(config));
  double max_units = p.TimeMode() ? *p.max_time : static_cast<double>(p.max_length.value_or(0));
  std::vector<AshaBracket> plan;
  if (p.name == "adaptive_asha") {
    DET_ASSIGN_OR_RETURN(plan, MakeAshaBrackets(p.mode, p.max_rungs, p.bracket_rungs, max_units,
                                                p.max_trials, p.max_concurrent_trials,
                                                p.divisor));
  } else if (p.name == "async_halving") {
    plan.push_back(AshaBracket{p.num_rungs, p.max_trials, p.max_concurrent_trials});
  } else {
    return InvalidArgument("preview: searcher '" + p.name + "' is not an ASHA searcher");
  }
  std::map<uint64_t, int64_t> by_length;
  for (const AshaBracket& b : plan) {
    std::vector<uint64_t> units = MakeRungUnits(b.num_rungs, max_units, p.divisor);
    int64_t n = b.max_trials;
    for (size_t k = 0; k < units.size() && n > 0; ++k) {
      if (k + 1 == units.size()) {
        by_length[units[k]] += n;
        break;
      }
      auto cont = std::max<int64_t>(static_cast<int64_t>(static_cast<double>(n) / p.divisor), 1);
      by_length[units[k]] += n - cont;
      n = cont;
    }
  }
  std::vector<LengthCount> out;
  for (const auto& [length, count] : by_length) {
    if (count > 0) out.push_back(LengthCount{count, length});
  }
  return out;
}

std::string DescribeAction(const Action& action) {
  if (const auto* c = std::get_if<CreateAction>(&action)) {
    return "create " + c->request_id + " seed=" + std::to_string(c->trial_seed) + " " +
           c->hparams.dump() + (c->parent_request_id ? " parent=" + *c->parent_request_id : "");
  }
  if (const auto* v = std::get_if<ValidateAfterAction>(&action)) {
    return "validate_after " + v->request_id + " " + std::to_string(v->length);
  }
  if (const auto* c = std::get_if<CloseAction>(&action)) return "close " + c->request_id;
  const auto& s = std::get<ShutdownAction>(action);
  return std::string("shutdown cancel=") + (s.cancel ? "1" : "0") +
         " failure=" + (s.failure ? "1" : "0");
}

Result<SimulateResult> Simulate(const config::ExperimentConfig& config,
                                const SimulateOptions& options) {
  DET_ASSIGN_OR_RETURN(std::unique_ptr<Searcher> searcher, Searcher::Create(config));
  bool time_mode = false;
  std::vector<uint64_t> points = options.report_points;
  std::string time_metric;
  const std::string& name = config.searcher.name;
  if (name == "adaptive_asha" || name == "async_halving") {
    DET_ASSIGN_OR_RETURN(MethodParams p, ReadMethodParams(config));
    if (p.TimeMode()) {
      time_mode = true;
      time_metric = p.time_metric;
      if (points.empty()) {
        std::set<uint64_t> set;
        for (int j = 0; j < 64; ++j) {
          std::vector<uint64_t> u = MakeRungUnits(j + 1, *p.max_time, p.divisor);
          set.insert(u.front());
          if (u.front() <= 1) break;
        }
        points.assign(set.begin(), set.end());
      }
    }
  }
  Driver driver(config, options, std::move(searcher));
  driver.time_metric_ = time_metric;
  return driver.Run(time_mode, std::move(points));
}

}  // namespace det::master::searcher
