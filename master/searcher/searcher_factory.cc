// Searcher::Create / Searcher::Restore: picks the search method by `searcher.name`.

#include <memory>

#include "master/searcher/random_search.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {

Result<std::unique_ptr<Searcher>> Searcher::Create(const config::ExperimentConfig& config) {
  const std::string& name = config.searcher.name;
  if (name == "single" || name == "random") {
    if (name == "random" && config.searcher.max_trials < 1) {
      return InvalidArgument("searcher.max_trials: must be > 0");
    }
    return std::unique_ptr<Searcher>(std::make_unique<RandomSearcher>(config));
  }
  return Unimplemented("searcher '" + name + "' is not supported yet");
}

Result<std::unique_ptr<Searcher>> Searcher::Restore(const config::ExperimentConfig& config,
                                                    const nlohmann::json& snapshot) {
  const std::string& name = config.searcher.name;
  if (name == "single" || name == "random") {
    auto searcher = std::make_unique<RandomSearcher>(config);
    DET_RETURN_IF_ERROR(searcher->LoadSnapshot(snapshot));
    return std::unique_ptr<Searcher>(std::move(searcher));
  }
  return Unimplemented("searcher '" + name + "' is not supported yet");
}

}  // namespace det::master::searcher
