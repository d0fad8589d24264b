#include "master/searcher/method_searcher.h"

#include <algorithm>
#include <cmath>

namespace det::master::searcher {

namespace {

using nlohmann::json;

constexpr int kSnapshotVersion = 1;

}  // namespace

MethodSearcher::MethodSearcher(const config::ExperimentConfig& config,
                               std::unique_ptr<SearchMethod> method)
    : name_(config.searcher.name),
      hparams_(config.hyperparameters),
      rng_(config.experiment_seed),
      method_(std::move(method)) {}

std::vector<Action> MethodSearcher::Record(std::vector<Action> actions) {
  for (const Action& action : actions) {
    if (const auto* c = std::get_if<CreateAction>(&action)) {
      trials_[c->request_id];
    } else if (const auto* v = std::get_if<ValidateAfterAction>(&action)) {
      auto it = trials_.find(v->request_id);
      if (it != trials_.end() && !it->second.done) it->second.pending.push_back(v->length);
    } else if (const auto* cl = std::get_if<CloseAction>(&action)) {
      auto it = trials_.find(cl->request_id);
      if (it != trials_.end()) {
        it->second.closed = true;
        it->second.pending.clear();
      }
    }
  }
  if (initialized_ && !shutdown_ && exited_count_ == static_cast<int64_t>(trials_.size())) {
    int64_t failures = 0, cancels = 0;
    for (const auto& [id, t] : trials_) {
      failures += t.failed;
      cancels += t.canceled;
    }
    shutdown_ = true;
    int64_t requested = static_cast<int64_t>(trials_.size());
    actions.emplace_back(std::in_place_type<ShutdownAction>,
                         ShutdownAction{.cancel = requested > 0 && cancels >= requested,
                                        .failure = requested > 0 && failures >= requested});
  }
  return actions;
}

std::vector<Action> MethodSearcher::InitialOperations() {
  if (initialized_) return std::vector<Action>();
  initialized_ = true;
  SearchContext ctx{rng_, hparams_};
  return Record(method_->InitialOperations(ctx));
}

std::vector<Action> MethodSearcher::TrialCreated(const std::string& request_id) {
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.created || it->second.done) return std::vector<Action>();
  it->second.created = true;
  units_[request_id] = 0;
  SearchContext ctx{rng_, hparams_};
  return Record(method_->TrialCreated(ctx, request_id));
}

Result<std::vector<Action>> MethodSearcher::ValidationCompleted(const std::string& request_id,
                                                                double metric, uint64_t length) {
  auto it = trials_.find(request_id);
  if (it == trials_.end()) return NotFound("no trial with request id " + request_id);
  TrialRecord& trial = it->second;
  auto op = std::find(trial.pending.begin(), trial.pending.end(), length);
  if (op == trial.pending.end()) {
    return InvalidArgument("trial " + request_id + " has no pending validation at length " +
                           std::to_string(length));
  }
  if (!std::isfinite(metric)) return InvalidArgument("searcher metric: must be a finite number");
  trial.pending.erase(op);
  double& units = units_[request_id];
  units = std::max(units, static_cast<double>(length));
  SearchContext ctx{rng_, hparams_};
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       method_->ValidationCompleted(ctx, request_id, metric, length));
  return Record(std::move(actions));
}

Result<std::vector<Action>> MethodSearcher::ValidationMetricsReported(
    const std::string& request_id, const nlohmann::json& metrics) {
  auto it = trials_.find(request_id);
  if (it == trials_.end()) return NotFound("no trial with request id " + request_id);
  if (it->second.done || it->second.closed) return std::vector<Action>();
  SearchContext ctx{rng_, hparams_};
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       method_->ValidationMetricsReported(ctx, request_id, metrics));
  return Record(std::move(actions));
}

std::vector<Action> MethodSearcher::TrialExitedEarly(const std::string& request_id,
                                                     ExitedReason reason) {
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.done) return std::vector<Action>();
  TrialRecord& trial = it->second;
  trial.done = true;
  trial.pending.clear();
  if (reason == ExitedReason::kErrored) trial.failed = true;
  if (reason == ExitedReason::kUserCanceled) trial.canceled = true;
  SearchContext ctx{rng_, hparams_};
  return Record(method_->TrialExitedEarly(ctx, request_id, reason));
}

std::vector<Action> MethodSearcher::TrialExited(const std::string& request_id) {
  auto it = trials_.find(request_id);
  if (it == trials_.end() || it->second.exited) return std::vector<Action>();
  TrialRecord& trial = it->second;
  trial.exited = true;
  ++exited_count_;
  if (!trial.done) {
    trial.done = true;
    trial.pending.clear();
  }
  SearchContext ctx{rng_, hparams_};
  return Record(method_->TrialExited(ctx, request_id));
}

void MethodSearcher::SetTrialProgress(const std::string& request_id, double units) {
  auto it = units_.find(request_id);
  if (it == units_.end() || !std::isfinite(units)) return;
  it->second = std::max(it->second, units);
}

double MethodSearcher::Progress() const {
  if (shutdown_) return 1.0;
  double p = method_->Progress(units_);
  if (!std::isfinite(p)) return 0;
  return std::clamp(p, 0.0, 1.0);
}

nlohmann::json MethodSearcher::Snapshot() const {
  json trials = json::object();
  for (const auto& [id, t] : trials_) {
    auto u = units_.find(id);
    trials[id] = json{
        {"created", t.created}, {"closed", t.closed},
        {"done", t.done},       {"exited", t.exited},
        {"failed", t.failed},   {"canceled", t.canceled},
        {"pending", t.pending}, {"units", u == units_.end() ? json(nullptr) : json(u->second)}};
  }
  return json{{"version", kSnapshotVersion},  {"search_method_type", name_},
              {"rand", rng_.Snapshot()},      {"initialized", initialized_},
              {"shutdown", shutdown_},        {"trials", std::move(trials)},
              {"method", method_->Snapshot()}};
}

Status MethodSearcher::LoadSnapshot(const nlohmann::json& snapshot) {
  try {
    if (snapshot.at("version").get<int>() != kSnapshotVersion) {
      return InvalidArgument("invalid searcher snapshot: unsupported version " +
                             snapshot.at("version").dump());
    }
    std::string type = snapshot.at("search_method_type").get<std::string>();
    if (type != name_) {
      return InvalidArgument("invalid searcher snapshot: it is for searcher '" + type + "', not '" +
                             name_ + "'");
    }
    auto rng = NpRand::TryFromSnapshot(snapshot.at("rand"));
    if (!rng) return InvalidArgument("invalid searcher snapshot: bad rand state");
    std::unordered_map<std::string, TrialRecord> trials;
    TrialUnits units;
    int64_t exited = 0;
    for (const auto& [id, t] : snapshot.at("trials").items()) {
      TrialRecord r;
      r.created = t.at("created").get<bool>();
      r.closed = t.at("closed").get<bool>();
      r.done = t.at("done").get<bool>();
      r.exited = t.at("exited").get<bool>();
      r.failed = t.at("failed").get<bool>();
      r.canceled = t.at("canceled").get<bool>();
      r.pending = t.at("pending").get<std::vector<uint64_t>>();
      if (!t.at("units").is_null()) units[id] = t.at("units").get<double>();
      exited += r.exited;
      trials.emplace(id, std::move(r));
    }
    DET_RETURN_IF_ERROR(method_->Restore(snapshot.at("method")));
    rng_ = *rng;
    initialized_ = snapshot.at("initialized").get<bool>();
    shutdown_ = snapshot.at("shutdown").get<bool>();
    trials_ = std::move(trials);
    units_ = std::move(units);
    exited_count_ = exited;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("invalid searcher snapshot: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace det::master::searcher
