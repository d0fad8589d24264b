// Snapshots written before trials became dense handles (testdata/*_snapshots.txt, produced by
// the string-keyed searchers with the driver below) must restore, and the same search must still
// reach the same state: line 1 of each file is the snapshot after `mid` events, line 2 the final
// one. This pins both "old snapshots from the store restore" and "behaviour did not change".

#include <gtest/gtest.h>

#include <deque>
#include <fstream>
#include <string>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {
namespace {

struct Golden {
  std::string mid, final;
};

Golden ReadGolden(const std::string& name) {
  std::ifstream in(std::string(DET_SEARCHER_TESTDATA) + "/" + name + "_snapshots.txt");
  Golden g;
  std::getline(in, g.mid);
  std::getline(in, g.final);
  return g;
}

config::ExperimentConfig Config(const std::string& searcher, bool grid) {
  std::string yaml =
      "entrypoint: model_def:Trial\nhyperparameters:\n"
      "  lr: {type: log, minval: -5, maxval: -1, base: 10" +
      std::string(grid ? ", count: 3" : "") +
      "}\n"
      "  layers: {type: int, minval: 1, maxval: 8, count: 3}\n"
      "  opt: {type: categorical, vals: [sgd, adam]}\n"
      "searcher: " +
      searcher + "\n";
  auto cfg = config::ParseExperimentConfig(yaml, config::ConfigDefaults{});
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return *cfg;
}

// FIFO over the actions; every 7th operation (n % 7 == 3) errors instead of validating.
Golden Drive(const config::ExperimentConfig& cfg, int mid_events) {
  auto searcher = std::move(Searcher::Create(cfg)).value();
  std::deque<Action> queue;
  for (auto& a : searcher->InitialOperations()) queue.push_back(a);
  int events = 0, ops = 0;
  Golden out;
  while (!queue.empty()) {
    if (events == mid_events) out.mid = searcher->Snapshot().dump();
    Action a = queue.front();
    queue.pop_front();
    std::vector<Action> more;
    if (auto* c = std::get_if<CreateAction>(&a)) {
      more = searcher->TrialCreated(c->request_id);
    } else if (auto* v = std::get_if<ValidateAfterAction>(&a)) {
      ++ops;
      searcher->SetTrialProgress(v->request_id, static_cast<double>(v->length) / 2.0);
      if (ops % 7 == 3) {
        more = searcher->TrialExitedEarly(v->request_id, ExitedReason::kErrored);
        for (auto& x : searcher->TrialExited(v->request_id)) more.push_back(x);
      } else {
        auto r = searcher->ValidationCompleted(v->request_id, (ops * 37 % 101) / 10.0, v->length);
        EXPECT_TRUE(r.ok()) << r.status().ToString();
        if (r.ok()) more = *r;
      }
    } else if (auto* cl = std::get_if<CloseAction>(&a)) {
      more = searcher->TrialExited(cl->request_id);
    }
    ++events;
    for (auto& m : more) queue.push_back(m);
  }
  out.final = searcher->Snapshot().dump();
  return out;
}

struct Case {
  const char* name;
  const char* searcher;
  bool grid;
  int mid;
};

class SnapshotCompatTest : public ::testing::TestWithParam<Case> {};

TEST_P(SnapshotCompatTest, OldSnapshotsRestoreAndTheSearchIsUnchanged) {
  const Case& c = GetParam();
  Golden golden = ReadGolden(c.name);
  ASSERT_FALSE(golden.mid.empty()) << "missing testdata for " << c.name;
  config::ExperimentConfig cfg = Config(c.searcher, c.grid);

  auto restored = Searcher::Restore(cfg, nlohmann::json::parse(golden.mid));
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ((*restored)->Snapshot().dump(), golden.mid);

  Golden now = Drive(cfg, c.mid);
  EXPECT_EQ(now.mid, golden.mid);
  EXPECT_EQ(now.final, golden.final);
}

INSTANTIATE_TEST_SUITE_P(
    Searchers, SnapshotCompatTest,
    ::testing::Values(Case{"adaptive_asha",
                           "{name: adaptive_asha, metric: loss, max_length: {batches: 1000}, "
                           "max_trials: 40, max_concurrent_trials: 8}",
                           false, 60},
                      Case{"random",
                           "{name: random, metric: loss, max_length: {batches: 100}, max_trials: "
                           "30, max_concurrent_trials: 5}",
                           false, 40},
                      Case{"grid",
                           "{name: grid, metric: loss, max_length: {batches: 100}, "
                           "max_concurrent_trials: 4}",
                           true, 20}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace det::master::searcher
