// Master restarts over a real SQLite store, with the store left as a kill -9 can leave it: a
// change stored but the searcher snapshot that follows it not. The search must carry on.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/config/experiment_config.h"
#include "master/searcher/searcher.h"
#include "master/server/master.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class MasterRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = det::testing::FreshTestDir("det-master-restore-"); }
  void TearDown() override {
    if (master_) master_->Stop();
    master_.reset();
    fs::remove_all(dir_);
  }

  std::unique_ptr<store::Store> OpenStore() {
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return std::move(opened).value();
  }

  void StartMaster() {
    MasterConfig config;
    config.data_dir = dir_.string();
    ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
    master_ = std::make_unique<Master>(config, OpenStore(), &clock_);
    Status st = master_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  void StopMaster() {
    master_->Stop();
    master_.reset();
  }

  int64_t Create(const std::string& yaml) {
    CreateExperimentRequest req;
    req.config_yaml = yaml;
    Principal who;
    who.user_id = 1;
    who.username = "admin";
    who.admin = true;
    auto created = master_->CreateExperiment(req, who);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created->experiment->id;
  }

  // Overwrites the stored snapshot with a fresh, never-initialized searcher's.
  void RewindSnapshotToCreation(int64_t exp_id) {
    auto st = OpenStore();
    auto row = st->GetExperiment(exp_id);
    ASSERT_TRUE(row.ok());
    auto cfg = config::ExperimentConfigFromJson(row->config);
    ASSERT_TRUE(cfg.ok());
    auto fresh = searcher::Searcher::Create(*cfg);
    ASSERT_TRUE(fresh.ok());
    ASSERT_TRUE(st->UpdateExperimentSnapshot(
                      exp_id, {{"initialized", false}, {"searcher", (*fresh)->Snapshot()}})
                    .ok());
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<Master> master_;
};

constexpr char kRandomTwo[] =
    "entrypoint: python3 train.py\n"
    "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
    "searcher: {name: random, metric: loss, max_trials: 2, max_concurrent_trials: 2,\n"
    "           max_length: {batches: 10}}\n";

TEST_F(MasterRestoreTest, TrialsStoredBeforeTheSnapshotGetTheirOperationsAfterRestart) {
  StartMaster();
  int64_t exp_id = Create(kRandomTwo);
  auto trials = master_->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 2u);
  StopMaster();
  RewindSnapshotToCreation(exp_id);

  StartMaster();
  trials = master_->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 2u) << "replayed creations must not add trials";
  for (const TrialView& t : *trials) {
    std::optional<Result<SearcherOpView>> answer;
    master_->GetSearcherOperation(t.row.id, 0,
                                  [&](Result<SearcherOpView> r) { answer.emplace(std::move(r)); });
    ASSERT_TRUE(answer.has_value()) << "a poll without wait answers at once";
    const Result<SearcherOpView>& op = *answer;
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    ASSERT_TRUE(op->length.has_value()) << "trial " << t.row.id << " got no operation";
    EXPECT_EQ(*op->length, 10u);
  }
}

TEST_F(MasterRestoreTest, RetriedCompletionIsAcceptedOnceAndOnlyOnce) {
  StartMaster();
  int64_t exp_id = Create(kRandomTwo);
  auto trials = master_->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  int64_t tid = trials->front().row.id;
  ASSERT_TRUE(master_->CompleteSearcherOperation(tid, 10, 0.5).ok());
  StopMaster();
  StartMaster();
  // The package retries when the reply was lost: the master has it already.
  Status again = master_->CompleteSearcherOperation(tid, 10, 0.5);
  EXPECT_TRUE(again.ok()) << again.ToString();
  Status other = master_->CompleteSearcherOperation(tid, 20, 0.5);
  EXPECT_FALSE(other.ok()) << "a length never asked for is still refused";
}

TEST_F(MasterRestoreTest, TrialThatEndedBeforeTheSnapshotIsToldToTheSearcher) {
  StartMaster();
  int64_t exp_id = Create(
      "entrypoint: python3 train.py\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 10}}\n");
  auto trials = master_->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 1u);
  int64_t tid = trials->front().row.id;
  StopMaster();
  {
    // The allocation's and the trial's end were stored; the master died before telling the
    // searcher.
    auto st = OpenStore();
    auto row = st->GetTrial(tid);
    ASSERT_TRUE(row.ok());
    row->state = "COMPLETED";
    ASSERT_TRUE(st->UpdateTrial(*row).ok());
    auto open = st->ListOpenAllocations();
    ASSERT_TRUE(open.ok());
    for (store::AllocationRow a : *open) {
      a.state = "TERMINATED";
      a.end_time = clock_.NowMicros();
      ASSERT_TRUE(st->UpsertAllocation(a).ok());
    }
  }
  StartMaster();
  auto exp = master_->GetExperiment(exp_id);
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(exp->row.state, "COMPLETED");
}

// An idle trial (its rung done, not promoted yet) is told "no operation for now" and exits 0.
// When the master restarts between that answer and the exit, the restored master re-adopts the
// process and must still read the exit as idle, not as the trial finishing (which would close
// it before the searcher can promote it).
TEST_F(MasterRestoreTest, ReadoptedAllocationExitingWithoutAnOperationLeavesTheTrialIdle) {
  StartMaster();
  Create(
      "entrypoint: python3 train.py\n"
      "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
      "searcher: {name: async_halving, metric: loss, num_rungs: 2, divisor: 2, max_trials: 2,\n"
      "           max_concurrent_trials: 2, max_length: {batches: 100}}\n");
  json agent = {{"slots", {{{"id", 0}, {"type", "cpu"}}, {{"id", 1}, {"type", "cpu"}}}}};
  ASSERT_TRUE(master_->RegisterAgent("a1", agent).ok());
  auto open = OpenStore()->ListOpenAllocations();
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 2u);
  json running = json::array();
  for (const store::AllocationRow& a : *open) {
    ASSERT_TRUE(
        master_
            ->HandleAgentEvents(
                "a1", {{"events",
                        {{{"type", "started"}, {"allocationId", a.allocation_id}, {"pid", 100}}}}})
            .ok());
    running.push_back(a.allocation_id);
  }
  const store::AllocationRow& first = open->front();
  // Rung 0 of the first trial: nothing to promote yet, so no operation for it.
  ASSERT_TRUE(master_->CompleteSearcherOperation(first.trial_id, 50, 0.1).ok());
  StopMaster();

  StartMaster();
  agent["running"] = running;
  ASSERT_TRUE(master_->RegisterAgent("a1", agent).ok());
  ASSERT_TRUE(
      master_
          ->HandleAgentEvents(
              "a1",
              {{"events",
                {{{"type", "exited"}, {"allocationId", first.allocation_id}, {"exitCode", 0}}}}})
          .ok());
  auto trial = master_->GetTrial(first.trial_id);
  ASSERT_TRUE(trial.ok());
  EXPECT_EQ(trial->row.state, "ACTIVE") << "the trial waits for the searcher, it is not done";
}

}  // namespace
}  // namespace det::master::server
