#include "master/searcher/journaled_searcher.h"

#include <cmath>
#include <utility>

namespace det::master::searcher {

namespace {
using nlohmann::json;
}  // namespace

std::vector<Action> JournaledSearcher::InitialOperations() {
  events_.push_back(json::array({"i"}));
  return inner_->InitialOperations();
}

std::vector<Action> JournaledSearcher::TrialCreated(const std::string& request_id) {
  events_.push_back(json::array({"c", request_id}));
  return inner_->TrialCreated(request_id);
}

Result<std::vector<Action>> JournaledSearcher::ValidationCompleted(const std::string& request_id,
                                                                   double metric, uint64_t length) {
  // A non-finite metric is refused before any change and has no JSON form: not recorded.
  if (std::isfinite(metric)) events_.push_back(json::array({"v", request_id, metric, length}));
  return inner_->ValidationCompleted(request_id, metric, length);
}

Result<std::vector<Action>> JournaledSearcher::ValidationMetricsReported(
    const std::string& request_id, const nlohmann::json& metrics) {
  events_.push_back(json::array({"m", request_id, metrics}));
  return inner_->ValidationMetricsReported(request_id, metrics);
}

std::vector<Action> JournaledSearcher::TrialExitedEarly(const std::string& request_id,
                                                        ExitedReason reason) {
  events_.push_back(json::array({"e", request_id, static_cast<int>(reason)}));
  return inner_->TrialExitedEarly(request_id, reason);
}

std::vector<Action> JournaledSearcher::TrialExited(const std::string& request_id) {
  events_.push_back(json::array({"x", request_id}));
  return inner_->TrialExited(request_id);
}

void JournaledSearcher::SetTrialProgress(const std::string& request_id, double units) {
  if (std::isfinite(units)) events_.push_back(json::array({"p", request_id, units}));
  inner_->SetTrialProgress(request_id, units);
}

Status JournaledSearcher::Replay(Searcher& searcher, const std::vector<nlohmann::json>& events) {
  for (const json& e : events) {
    try {
      const std::string kind = e.at(0).get<std::string>();
      if (kind == "i") {
        searcher.InitialOperations();
      } else if (kind == "c") {
        searcher.TrialCreated(e.at(1).get<std::string>());
      } else if (kind == "v") {
        (void)searcher.ValidationCompleted(e.at(1).get<std::string>(), e.at(2).get<double>(),
                                           e.at(3).get<uint64_t>());
      } else if (kind == "m") {
        (void)searcher.ValidationMetricsReported(e.at(1).get<std::string>(), e.at(2));
      } else if (kind == "e") {
        int reason = e.at(2).get<int>();
        if (reason < 0 || reason > static_cast<int>(ExitedReason::kUserRequestedStop)) {
          return InvalidArgument("searcher journal: unknown exit reason " + e.at(2).dump());
        }
        searcher.TrialExitedEarly(e.at(1).get<std::string>(), static_cast<ExitedReason>(reason));
      } else if (kind == "x") {
        searcher.TrialExited(e.at(1).get<std::string>());
      } else if (kind == "p") {
        searcher.SetTrialProgress(e.at(1).get<std::string>(), e.at(2).get<double>());
      } else {
        return InvalidArgument("searcher journal: unknown event '" + kind + "'");
      }
    } catch (const json::exception& ex) {
      return InvalidArgument(std::string("searcher journal: malformed event ") + e.dump() + ": " +
                             ex.what());
    }
  }
  return Status::Ok();
}

std::unique_ptr<Searcher> JournaledSearcher::Clone() const {
  auto copy = std::make_unique<JournaledSearcher>(inner_->Clone());
  copy->events_ = events_;
  return copy;
}

}  // namespace det::master::searcher
