#include "master/searcher/random_search.h"

#include <algorithm>
#include <cmath>

#include "master/searcher/create_action.h"

namespace det::master::searcher {

namespace {

using nlohmann::json;

constexpr int kSnapshotVersion = 1;

}  // namespace

RandomSearcher::RandomSearcher(const config::ExperimentConfig& config)
    : name_(config.searcher.name),
      hparams_(config.hyperparameters),
      max_length_(config.searcher.max_length),
      max_trials_(name_ == "single" ? 1 : config.searcher.max_trials),
      max_concurrent_trials_(name_ == "single" ? 1 : config.searcher.max_concurrent_trials),
      rng_(config.experiment_seed) {}

CreateAction RandomSearcher::NewTrial() {
  CreateAction create = NewCreateAction(hparams_, rng_);
  TrialState& trial = trials_[create.request_id];
  trial.seq = trials_requested_;
  ++trials_requested_;
  ++created_trials_;
  return create;
}

void RandomSearcher::MaybeShutdown(std::vector<Action>* actions) {
  if (shutdown_ || !initialized_ || created_trials_ < max_trials_) return;
  int64_t done = 0, failures = 0, cancels = 0;
  for (const auto& [id, trial] : trials_) {
    done += trial.done;
    failures += trial.failed;
    cancels += trial.canceled;
  }
  if (done < trials_requested_) return;
  shutdown_ = true;
  actions->push_back(ShutdownAction{.cancel = cancels >= trials_requested_,
                                    .failure = failures >= trials_requested_});
}

std::vector<Action> RandomSearcher::InitialOperations() {
  std::vector<Action> actions;
  if (initialized_) return actions;
  initialized_ = true;
  int64_t initial = max_trials_;
  if (max_concurrent_trials_ > 0) initial = std::min(max_trials_, max_concurrent_trials_);
  for (int64_t i = 0; i < initial; ++i) actions.push_back(NewTrial());
  return actions;
}

std::vector<Action> RandomSearcher::TrialCreated(const std::string& request_id) {
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.created) return std::vector<Action>();
  it->second.created = true;
  it->second.units = 0;
  std::vector<Action> actions;
  if (max_length_) {
    actions.push_back(ValidateAfterAction{.request_id = request_id, .length = max_length_->value});
  }
  return actions;
}

Result<std::vector<Action>> RandomSearcher::ValidationCompleted(const std::string& request_id,
                                                                double metric,
                                                                uint64_t length) {
  auto it = trials_.find(request_id);
  if (it == trials_.end()) return NotFound("no trial with request id " + request_id);
  TrialState& trial = it->second;
  if (!max_length_ || length != max_length_->value) {
    return InvalidArgument("trial " + request_id + " has no pending validation at length " +
                           std::to_string(length));
  }
  if (trial.closed) {
    return FailedPrecondition("validation of trial " + request_id + " at length " +
                              std::to_string(length) + " was already completed");
  }
  trial.closed = true;
  trial.units = static_cast<double>(length);
  std::vector<Action> actions;
  if (!trial.done) actions.push_back(CloseAction{.request_id = request_id});
  return actions;
}

std::vector<Action> RandomSearcher::TrialExitedEarly(const std::string& request_id,
                                                     ExitedReason reason) {
  std::vector<Action> actions;
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.done) return actions;
  TrialState& trial = it->second;
  trial.done = true;
  switch (reason) {
    case ExitedReason::kErrored:
      trial.failed = true;
      break;
    case ExitedReason::kUserCanceled:
      trial.canceled = true;
      break;
    case ExitedReason::kInvalidHp:
    case ExitedReason::kInitInvalidHp:
      if (name_ == "random") {
        trial.replaced = true;
        --created_trials_;
      }
      break;
    case ExitedReason::kUserRequestedStop:
      break;
  }
  MaybeShutdown(&actions);
  return actions;
}

std::vector<Action> RandomSearcher::TrialExited(const std::string& request_id) {
  std::vector<Action> actions;
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.process_exited) return actions;
  it->second.process_exited = true;
  it->second.done = true;
  if (created_trials_ < max_trials_) {
    // in_place construction: GCC 12 warns falsely on push_back of a variant here.
    actions.emplace_back(std::in_place_type<CreateAction>, NewTrial());
  }
  MaybeShutdown(&actions);
  return actions;
}

void RandomSearcher::SetTrialProgress(const std::string& request_id, double units) {
  auto it = trials_.find(request_id);
  if (it == trials_.end()) return;
  it->second.units = units;
}

double RandomSearcher::Progress() const {
  double sum = 0;
  int64_t counted = 0;
  for (const auto& [id, trial] : trials_) {
    if (!trial.created || trial.replaced) continue;
    ++counted;
    if (trial.closed || trial.done) {
      sum += 1;
    } else if (max_length_ && max_length_->value > 0) {
      sum += std::clamp(trial.units / static_cast<double>(max_length_->value), 0.0, 1.0);
    }
  }
  int64_t denominator = std::max(counted, max_trials_);
  if (denominator <= 0) return 0;
  double progress = sum / static_cast<double>(denominator);
  return std::isfinite(progress) ? progress : 0;
}

nlohmann::json RandomSearcher::Snapshot() const {
  json trials = json::object();
  for (const auto& [id, t] : trials_) {
    trials[id] = json{{"seq", t.seq},
                      {"created", t.created},
                      {"closed", t.closed},
                      {"done", t.done},
                      {"process_exited", t.process_exited},
                      {"failed", t.failed},
                      {"canceled", t.canceled},
                      {"replaced", t.replaced},
                      {"units", t.units}};
  }
  return json{{"version", kSnapshotVersion},
              {"search_method_type", name_},
              {"rand", rng_.Snapshot()},
              {"initialized", initialized_},
              {"shutdown", shutdown_},
              {"trials_requested", trials_requested_},
              {"created_trials", created_trials_},
              {"trials", std::move(trials)}};
}

Status RandomSearcher::LoadSnapshot(const nlohmann::json& snapshot) {
  // nlohmann throws on type mismatches; keep exceptions inside this module.
  try {
    if (snapshot.at("version").get<int>() != kSnapshotVersion) {
      return InvalidArgument("invalid searcher snapshot: unsupported version " +
                             snapshot.at("version").dump());
    }
    std::string type = snapshot.at("search_method_type").get<std::string>();
    if (type != name_) {
      return InvalidArgument("invalid searcher snapshot: it is for searcher '" + type +
                             "', not '" + name_ + "'");
    }
    auto rng = NpRand::TryFromSnapshot(snapshot.at("rand"));
    if (!rng) return InvalidArgument("invalid searcher snapshot: bad rand state");
    std::map<std::string, TrialState> trials;
    for (const auto& [id, t] : snapshot.at("trials").items()) {
      TrialState s;
      s.seq = t.at("seq").get<int64_t>();
      s.created = t.at("created").get<bool>();
      s.closed = t.at("closed").get<bool>();
      s.done = t.at("done").get<bool>();
      s.process_exited = t.at("process_exited").get<bool>();
      s.failed = t.at("failed").get<bool>();
      s.canceled = t.at("canceled").get<bool>();
      s.replaced = t.at("replaced").get<bool>();
      s.units = t.at("units").get<double>();
      trials.emplace(id, s);
    }
    rng_ = *rng;
    initialized_ = snapshot.at("initialized").get<bool>();
    shutdown_ = snapshot.at("shutdown").get<bool>();
    trials_requested_ = snapshot.at("trials_requested").get<int64_t>();
    created_trials_ = snapshot.at("created_trials").get<int64_t>();
    trials_ = std::move(trials);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("invalid searcher snapshot: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace det::master::searcher
