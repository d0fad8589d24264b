#include "master/searcher/tournament.h"

namespace det::master::searcher {

namespace {
using nlohmann::json;
}  // namespace

TournamentMethod::TournamentMethod(std::vector<std::unique_ptr<SearchMethod>> brackets)
    : brackets_(std::move(brackets)) {}

std::vector<Action> TournamentMethod::Own(size_t bracket, std::vector<Action> actions) {
  for (const Action& a : actions) {
    if (const auto* c = std::get_if<CreateAction>(&a)) owner_[c->request_id] = bracket;
  }
  return actions;
}

int TournamentMethod::BracketOf(const std::string& id) const {
  auto it = owner_.find(id);
  return it == owner_.end() ? -1 : static_cast<int>(it->second);
}

std::vector<Action> TournamentMethod::InitialOperations(SearchContext& ctx) {
  std::vector<Action> all;
  for (size_t i = 0; i < brackets_.size(); ++i) {
    for (Action& a : Own(i, brackets_[i]->InitialOperations(ctx))) all.push_back(std::move(a));
  }
  return all;
}

std::vector<Action> TournamentMethod::TrialCreated(SearchContext& ctx, const std::string& id) {
  auto it = owner_.find(id);
  if (it == owner_.end()) return std::vector<Action>();
  return Own(it->second, brackets_[it->second]->TrialCreated(ctx, id));
}

Result<std::vector<Action>> TournamentMethod::ValidationCompleted(SearchContext& ctx,
                                                                  const std::string& id,
                                                                  double metric, uint64_t length) {
  auto it = owner_.find(id);
  if (it == owner_.end()) return NotFound("no trial with request id " + id);
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       brackets_[it->second]->ValidationCompleted(ctx, id, metric, length));
  return Own(it->second, std::move(actions));
}

Result<std::vector<Action>> TournamentMethod::ValidationMetricsReported(
    SearchContext& ctx, const std::string& id, const nlohmann::json& metrics) {
  auto it = owner_.find(id);
  if (it == owner_.end()) return NotFound("no trial with request id " + id);
  DET_ASSIGN_OR_RETURN(std::vector<Action> actions,
                       brackets_[it->second]->ValidationMetricsReported(ctx, id, metrics));
  return Own(it->second, std::move(actions));
}

std::vector<Action> TournamentMethod::TrialExitedEarly(SearchContext& ctx, const std::string& id,
                                                       ExitedReason reason) {
  auto it = owner_.find(id);
  if (it == owner_.end()) return std::vector<Action>();
  return Own(it->second, brackets_[it->second]->TrialExitedEarly(ctx, id, reason));
}

std::vector<Action> TournamentMethod::TrialExited(SearchContext& ctx, const std::string& id) {
  auto it = owner_.find(id);
  if (it == owner_.end()) return std::vector<Action>();
  return Own(it->second, brackets_[it->second]->TrialExited(ctx, id));
}

double TournamentMethod::Progress(const TrialUnits& units) const {
  if (brackets_.empty()) return 1;
  double sum = 0;
  for (const auto& b : brackets_) sum += b->Progress(units);
  return sum / static_cast<double>(brackets_.size());
}

nlohmann::json TournamentMethod::Snapshot() const {
  json brackets = json::array();
  for (const auto& b : brackets_) brackets.push_back(b->Snapshot());
  json owner = json::object();  // ordered by request id
  for (const auto& [id, b] : owner_) owner[id] = b;
  return json{{"brackets", std::move(brackets)}, {"owner", std::move(owner)}};
}

Status TournamentMethod::Restore(const nlohmann::json& snapshot) {
  const json& brackets = snapshot.at("brackets");
  if (brackets.size() != brackets_.size()) {
    return InvalidArgument("invalid searcher snapshot: bracket count differs from the config");
  }
  auto owner = snapshot.at("owner").get<std::unordered_map<std::string, size_t>>();
  for (const auto& [id, b] : owner) {
    if (b >= brackets_.size()) return InvalidArgument("invalid searcher snapshot: bad bracket");
  }
  for (size_t i = 0; i < brackets_.size(); ++i) {
    DET_RETURN_IF_ERROR(brackets_[i]->Restore(brackets[i]));
  }
  owner_ = std::move(owner);
  return Status::Ok();
}

}  // namespace det::master::searcher
