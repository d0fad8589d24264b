#include "master/searcher/method_searcher.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

TrialHandle MethodSearcher::Known(const std::string& request_id) {
  TrialHandle trial = ids_.Lookup(request_id);
  // A method registers its Creates before they reach Record: an id it registered in a call
  // that then failed has no record.
  return trial < trials_.size() ? trial : kNoTrial;
}

void MethodSearcher::AddPending(TrialHandle trial, uint64_t length) {
  TrialRecord& t = trials_[trial];
  if (t.pending == 0) {
    t.first_pending = length;
  } else {
    more_pending_[trial].push_back(length);
  }
  ++t.pending;
}

bool MethodSearcher::OwesValidation(TrialHandle trial, uint64_t length) const {
  const TrialRecord& t = trials_[trial];
  if (t.pending == 0) return false;
  if (t.first_pending == length) return true;
  if (t.pending == 1) return false;
  const std::vector<uint64_t>& rest = more_pending_.at(trial);
  return std::find(rest.begin(), rest.end(), length) != rest.end();
}

bool MethodSearcher::TakePending(TrialHandle trial, uint64_t length) {
  TrialRecord& t = trials_[trial];
  if (t.pending == 0) return false;
  if (t.pending == 1) {
    if (t.first_pending != length) return false;
    t.pending = 0;
    return true;
  }
  auto more = more_pending_.find(trial);
  std::vector<uint64_t>& rest = more->second;
  if (t.first_pending == length) {
    t.first_pending = rest.front();
    rest.erase(rest.begin());
  } else {
    auto op = std::find(rest.begin(), rest.end(), length);
    if (op == rest.end()) return false;
    rest.erase(op);
  }
  if (--t.pending == 1) more_pending_.erase(more);
  return true;
}

void MethodSearcher::ClearPending(TrialHandle trial) {
  if (trials_[trial].pending > 1) more_pending_.erase(trial);
  trials_[trial].pending = 0;
}

std::vector<uint64_t> MethodSearcher::Pending(TrialHandle trial) const {
  const TrialRecord& t = trials_[trial];
  std::vector<uint64_t> out;
  if (t.pending == 0) return out;
  out.push_back(t.first_pending);
  if (t.pending > 1) {
    const std::vector<uint64_t>& rest = more_pending_.at(trial);
    out.insert(out.end(), rest.begin(), rest.end());
  }
  return out;
}

std::vector<Action> MethodSearcher::Record(std::vector<Action> actions) {
  for (const Action& action : actions) {
    if (const auto* c = std::get_if<CreateAction>(&action)) {
      TrialHandle trial = ids_.Add(c->request_id);  // the method may have added it already
      if (trial >= trials_.size()) trials_.resize(trial + 1);
    } else if (const auto* v = std::get_if<ValidateAfterAction>(&action)) {
      TrialHandle trial = ids_.Lookup(v->request_id);
      if (trial != kNoTrial && !trials_[trial].done) AddPending(trial, v->length);
    } else if (const auto* cl = std::get_if<CloseAction>(&action)) {
      TrialHandle trial = ids_.Lookup(cl->request_id);
      if (trial != kNoTrial) {
        trials_[trial].closed = true;
        ClearPending(trial);
      }
    }
  }
  if (initialized_ && !shutdown_ && exited_count_ == static_cast<int64_t>(trials_.size())) {
    int64_t failures = 0, cancels = 0;  // once per search: the scan is not per event
    for (const TrialRecord& t : trials_) {
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
  SearchContext ctx = Context();
  return Record(method_->InitialOperations(ctx));
}

std::vector<Action> MethodSearcher::TrialCreated(const std::string& request_id) {
  TrialHandle trial = Known(request_id);
  if (trial == kNoTrial || trials_[trial].created || trials_[trial].done) {
    return std::vector<Action>();
  }
  trials_[trial].created = true;
  trials_[trial].units = 0;
  SearchContext ctx = Context();
  return Record(method_->TrialCreated(ctx, trial));
}

Result<std::vector<Action>> MethodSearcher::ValidationCompleted(const std::string& request_id,
                                                                double metric, uint64_t length) {
  TrialHandle handle = Known(request_id);
  if (handle == kNoTrial) return NotFound("no trial with request id " + request_id);
  if (!OwesValidation(handle, length)) {
    return InvalidArgument("trial " + request_id + " has no pending validation at length " +
                           std::to_string(length));
  }
  if (!std::isfinite(metric)) return InvalidArgument("searcher metric: must be a finite number");
  TakePending(handle, length);
  if (sampler_) sampler_->Validated(handle, length, metric);
  double& units = trials_[handle].units;
  units = std::isnan(units) ? static_cast<double>(length)
                            : std::max(units, static_cast<double>(length));
  SearchContext ctx = Context();
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       method_->ValidationCompleted(ctx, handle, metric, length));
  return Record(std::move(actions));
}

Result<std::vector<Action>> MethodSearcher::ValidationMetricsReported(
    const std::string& request_id, const nlohmann::json& metrics) {
  TrialHandle trial = Known(request_id);
  if (trial == kNoTrial) return NotFound("no trial with request id " + request_id);
  if (trials_[trial].done || trials_[trial].closed) return std::vector<Action>();
  SearchContext ctx = Context();
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       method_->ValidationMetricsReported(ctx, trial, metrics));
  return Record(std::move(actions));
}

std::vector<Action> MethodSearcher::TrialExitedEarly(const std::string& request_id,
                                                     ExitedReason reason) {
  TrialHandle handle = Known(request_id);
  if (handle == kNoTrial || trials_[handle].done) return std::vector<Action>();
  TrialRecord& trial = trials_[handle];
  trial.done = true;
  ClearPending(handle);
  if (reason == ExitedReason::kErrored) trial.failed = true;
  if (reason == ExitedReason::kUserCanceled) trial.canceled = true;
  if (sampler_) sampler_->Ended(handle);
  SearchContext ctx = Context();
  return Record(method_->TrialExitedEarly(ctx, handle, reason));
}

std::vector<Action> MethodSearcher::TrialExited(const std::string& request_id) {
  TrialHandle handle = Known(request_id);
  if (handle == kNoTrial || trials_[handle].exited) return std::vector<Action>();
  TrialRecord& trial = trials_[handle];
  trial.exited = true;
  ++exited_count_;
  if (sampler_) sampler_->Ended(handle);
  if (!trial.done) {
    trial.done = true;
    ClearPending(handle);
  }
  SearchContext ctx = Context();
  return Record(method_->TrialExited(ctx, handle));
}

void MethodSearcher::SetTrialProgress(const std::string& request_id, double units) {
  TrialHandle trial = Known(request_id);
  if (trial == kNoTrial || std::isnan(trials_[trial].units) || !std::isfinite(units)) return;
  trials_[trial].units = std::max(trials_[trial].units, units);
}

double MethodSearcher::Progress() const {
  if (shutdown_) return 1.0;
  class Units : public TrialUnits {
   public:
    Units(const RequestIdIndex& ids, const std::vector<TrialRecord>& trials)
        : TrialUnits(ids), trials_(trials) {}
    std::optional<double> Of(TrialHandle trial) const override {
      if (trial >= trials_.size() || std::isnan(trials_[trial].units)) return std::nullopt;
      return trials_[trial].units;
    }

   private:
    const std::vector<TrialRecord>& trials_;
  };
  double p = method_->Progress(Units(ids_, trials_));
  if (!std::isfinite(p)) return 0;
  return std::clamp(p, 0.0, 1.0);
}

nlohmann::json MethodSearcher::Snapshot() const {
  json trials = json::object();
  for (TrialHandle h = 0; h < trials_.size(); ++h) {
    const TrialRecord& t = trials_[h];
    trials[std::string(ids_.id(h))] =
        json{{"created", bool{t.created}},
             {"closed", bool{t.closed}},
             {"done", bool{t.done}},
             {"exited", bool{t.exited}},
             {"failed", bool{t.failed}},
             {"canceled", bool{t.canceled}},
             {"pending", Pending(h)},
             {"units", std::isnan(t.units) ? json(nullptr) : json(t.units)}};
  }
  json out{{"version", kSnapshotVersion},
           {"search_method_type", name_},
           {"rand", rng_.Snapshot()},
           {"initialized", initialized_},
           {"shutdown", shutdown_},
           {"trials", std::move(trials)},
           {"method", method_->Snapshot(ids_)}};
  if (sampler_) out["sampler"] = sampler_->Snapshot(ids_);  // absent with random sampling
  return out;
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
    // Handles in request-id order (the snapshot's): only lookups depend on them.
    RequestIdIndex ids;
    std::vector<TrialRecord> trials;
    std::unordered_map<TrialHandle, std::vector<uint64_t>> more_pending;
    int64_t exited = 0;
    for (const auto& [id, t] : snapshot.at("trials").items()) {
      TrialRecord r;
      r.created = t.at("created").get<bool>();
      r.closed = t.at("closed").get<bool>();
      r.done = t.at("done").get<bool>();
      r.exited = t.at("exited").get<bool>();
      r.failed = t.at("failed").get<bool>();
      r.canceled = t.at("canceled").get<bool>();
      auto pending = t.at("pending").get<std::vector<uint64_t>>();
      r.pending = static_cast<uint32_t>(pending.size());
      if (!pending.empty()) r.first_pending = pending.front();
      if (pending.size() > 1) {
        more_pending.emplace(static_cast<TrialHandle>(trials.size()),
                             std::vector<uint64_t>(pending.begin() + 1, pending.end()));
      }
      if (!t.at("units").is_null()) r.units = t.at("units").get<double>();
      exited += r.exited;
      ids.Add(id);
      trials.push_back(std::move(r));
    }
    DET_RETURN_IF_ERROR(method_->Restore(snapshot.at("method"), ids));
    if (sampler_) {
      if (!snapshot.contains("sampler")) {
        return InvalidArgument("invalid searcher snapshot: no state of its tpe sampler");
      }
      std::optional<TpeSampler> sampler = sampler_;
      DET_RETURN_IF_ERROR(sampler->Restore(snapshot.at("sampler"), ids));
      sampler_ = std::move(sampler);
    }
    rng_ = *rng;
    initialized_ = snapshot.at("initialized").get<bool>();
    shutdown_ = snapshot.at("shutdown").get<bool>();
    ids_ = std::move(ids);
    trials_ = std::move(trials);
    more_pending_ = std::move(more_pending);
    exited_count_ = exited;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("invalid searcher snapshot: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace det::master::searcher
