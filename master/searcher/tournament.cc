#include "master/searcher/tournament.h"

namespace det::master::searcher {

namespace {
using nlohmann::json;
}  // namespace

TournamentMethod::TournamentMethod(std::vector<std::unique_ptr<SearchMethod>> brackets)
    : brackets_(std::make_move_iterator(brackets.begin()),
                std::make_move_iterator(brackets.end())) {}

std::vector<Action> TournamentMethod::Own(SearchContext& ctx, size_t bracket,
                                          std::vector<Action> actions) {
  for (const Action& a : actions) {
    if (const auto* c = std::get_if<CreateAction>(&a)) {
      TrialHandle trial = ctx.ids.Add(c->request_id);
      if (trial >= owner_.size()) owner_.resize(trial + 1, kNoBracket);
      owner_[trial] = static_cast<uint16_t>(bracket);
    }
  }
  return actions;
}

int TournamentMethod::BracketOf(TrialHandle trial) const {
  return trial < owner_.size() && owner_[trial] != kNoBracket ? owner_[trial] : -1;
}

std::vector<Action> TournamentMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> all;
  for (size_t i = 0; i < brackets_.size(); ++i) {
    for (Action& a : Own(ctx, i, brackets_[i]->InitialOperations(ctx))) {
      all.push_back(std::move(a));
    }
  }
  return all;
}

std::vector<Action> TournamentMethod::TrialCreated(SearchContext& ctx, TrialHandle trial) {
  int b = BracketOf(trial);
  if (b < 0) return std::vector<Action>();
  return Own(ctx, b, brackets_[b]->TrialCreated(ctx, trial));
}

Result<std::vector<Action>> TournamentMethod::ValidationCompleted(SearchContext& ctx,
                                                                  TrialHandle trial, double metric,
                                                                  uint64_t length) {
  int b = BracketOf(trial);
  if (b < 0) return NotFound("no trial with request id " + std::string(ctx.ids.id(trial)));
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       brackets_[b]->ValidationCompleted(ctx, trial, metric, length));
  return Own(ctx, b, std::move(actions));
}

Result<std::vector<Action>> TournamentMethod::ValidationMetricsReported(
    SearchContext& ctx, TrialHandle trial, const nlohmann::json& metrics) {
  int b = BracketOf(trial);
  if (b < 0) return NotFound("no trial with request id " + std::string(ctx.ids.id(trial)));
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       brackets_[b]->ValidationMetricsReported(ctx, trial, metrics));
  return Own(ctx, b, std::move(actions));
}

std::vector<Action> TournamentMethod::TrialExitedEarly(SearchContext& ctx, TrialHandle trial,
                                                       ExitedReason reason) {
  int b = BracketOf(trial);
  if (b < 0) return std::vector<Action>();
  return Own(ctx, b, brackets_[b]->TrialExitedEarly(ctx, trial, reason));
}

std::vector<Action> TournamentMethod::TrialExited(SearchContext& ctx, TrialHandle trial) {
  int b = BracketOf(trial);
  if (b < 0) return std::vector<Action>();
  return Own(ctx, b, brackets_[b]->TrialExited(ctx, trial));
}

double TournamentMethod::Progress(const TrialUnits& units) const {
  if (brackets_.empty()) return 1;
  double sum = 0;
  for (const auto& b : brackets_) sum += b->Progress(units);
  return sum / static_cast<double>(brackets_.size());
}

nlohmann::json TournamentMethod::Snapshot(const RequestIdIndex& ids) const {
  json brackets = json::array();
  for (const auto& b : brackets_) brackets.push_back(b->Snapshot(ids));
  json owner = json::object();  // ordered by request id
  for (TrialHandle t = 0; t < owner_.size(); ++t) {
    if (owner_[t] != kNoBracket) owner[std::string(ids.id(t))] = owner_[t];
  }
  return json{{"brackets", std::move(brackets)}, {"owner", std::move(owner)}};
}

Status TournamentMethod::Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids) {
  const json& brackets = snapshot.at("brackets");
  if (brackets.size() != brackets_.size()) {
    return InvalidArgument("invalid searcher snapshot: bracket count differs from the config");
  }
  std::vector<uint16_t> owner(ids.size(), kNoBracket);
  for (const auto& [id, b] : snapshot.at("owner").items()) {
    auto bracket = b.get<size_t>();
    if (bracket >= brackets_.size()) {
      return InvalidArgument("invalid searcher snapshot: bad bracket");
    }
    TrialHandle trial = ids.Find(id);
    if (trial == kNoTrial) {
      return InvalidArgument("invalid searcher snapshot: bracket owner of unknown trial " + id);
    }
    owner[trial] = static_cast<uint16_t>(bracket);
  }
  for (size_t i = 0; i < brackets_.size(); ++i) {
    DET_RETURN_IF_ERROR(brackets_[i]->Restore(brackets[i], ids));
  }
  owner_ = std::move(owner);
  return Status::Ok();
}

}  // namespace det::master::searcher
