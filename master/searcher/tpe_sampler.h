#pragma once
// TpeSampler: model-based sampling of new trials' hyperparameters inside a search method that
// trains trials to several lengths (adaptive_asha, async_halving with `sampler: tpe`), in the
// spirit of BOHB (Falkner et al., 2018): once n_startup_trials trials have a metric, trials are
// ranked by the longest length they validated (deeper first) and then by their metric there, and
// TPE splits that ranking into good and bad (a trial ASHA did not promote ranks below every
// trial it did); before that, a trial is drawn exactly as random sampling draws it. Rungs,
// promotions and stopping are the method's and do not change. Pure; MethodSearcher owns it and
// tells it every creation, validation and end (tpe_search.h's SuggestTpe does the suggesting).

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "master/config/experiment_config.h"
#include "master/searcher/nprand.h"
#include "master/searcher/request_id_index.h"
#include "master/searcher/search_method.h"
#include "master/searcher/searcher.h"
#include "master/searcher/tpe_search.h"

namespace det::master::searcher {

class TpeSampler {
 public:
  explicit TpeSampler(TpeOptions options) : options_(options) {}

  // A new trial: hyperparameters (modelled or random), then the request id and seed as
  // NewCreateActionWithHparams draws them; registered in `ids`.
  CreateAction Create(const config::Hyperparameters& space, NpRand& rng, RequestIdIndex& ids);
  void Validated(TrialHandle trial, uint64_t length, double metric);
  void Ended(TrialHandle trial);

  // {trials: {request id: {seq, hparams, losses: {"length": loss}, ended}}, next_seq}.
  nlohmann::json Snapshot(const RequestIdIndex& ids) const;
  Status Restore(const nlohmann::json& snapshot, const RequestIdIndex& ids);

 private:
  struct Trial {
    bool known = false;
    bool ended = false;
    int64_t seq = 0;
    nlohmann::json hparams;
    std::map<uint64_t, double> losses;  // by validated length
  };

  TpeOptions options_;
  std::vector<Trial> trials_;  // by handle
  int64_t next_seq_ = 0;
};

}  // namespace det::master::searcher
