// Master restarts over a real SQLite store, with the store left as a kill -9 can leave it: a
// change stored but the searcher snapshot that follows it not. The search must carry on.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/config/experiment_config.h"
#include "master/searcher/journaled_searcher.h"
#include "master/searcher/searcher.h"
#include "master/server/master.h"
#include "master/server/master_sqlite_fixture.h"
#include "master/server/searcher_journal_service.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every Master in this binary checks, after each persist, that the trials it marked dirty were
// all the trials whose searcher state changed (SearcherJournalService::Options::verify_dirty).
[[maybe_unused]] const bool kVerifyDirty = [] {
  setenv("DET_VERIFY_SEARCHER_DIRTY", "1", 1);
  return true;
}();

class MasterRestoreTest : public MasterOverSqliteTest {
 protected:
  MasterRestoreTest() : MasterOverSqliteTest("det-master-restore-") {}

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
};

constexpr char kRandomTwo[] =
    "entrypoint: python3 train.py\n"
    "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
    "searcher: {name: random, metric: loss, max_trials: 2, max_concurrent_trials: 2,\n"
    "           max_length: {batches: 10}}\n";

TEST_F(MasterRestoreTest, TrialsStoredBeforeTheSnapshotGetTheirOperationsAfterRestart) {
  StartMaster();
  int64_t exp_id = Create(kRandomTwo);
  auto trials = master_->experiments()->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 2u);
  StopMaster();
  RewindSnapshotToCreation(exp_id);

  StartMaster();
  trials = master_->experiments()->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 2u) << "replayed creations must not add trials";
  for (const TrialView& t : *trials) {
    const Result<SearcherOpView> op = SearcherOp(master_.get(), t.row.id);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    ASSERT_TRUE(op->length.has_value()) << "trial " << t.row.id << " got no operation";
    EXPECT_EQ(*op->length, 10u);
  }
}

TEST_F(MasterRestoreTest, RetriedCompletionIsAcceptedOnceAndOnlyOnce) {
  StartMaster();
  int64_t exp_id = Create(kRandomTwo);
  auto trials = master_->experiments()->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  int64_t tid = trials->front().row.id;
  ASSERT_TRUE(master_->experiments()->CompleteSearcherOperation(tid, 10, 0.5).ok());
  StopMaster();
  StartMaster();
  // The package retries when the reply was lost: the master has it already.
  Status again = master_->experiments()->CompleteSearcherOperation(tid, 10, 0.5);
  EXPECT_TRUE(again.ok()) << again.ToString();
  Status other = master_->experiments()->CompleteSearcherOperation(tid, 20, 0.5);
  EXPECT_FALSE(other.ok()) << "a length never asked for is still refused";
}

TEST_F(MasterRestoreTest, TrialThatEndedBeforeTheSnapshotIsToldToTheSearcher) {
  StartMaster();
  int64_t exp_id = Create(
      "entrypoint: python3 train.py\n"
      "searcher: {name: single, metric: loss, max_length: {batches: 10}}\n");
  auto trials = master_->experiments()->ListTrials(exp_id);
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
  auto exp = master_->experiments()->GetExperiment(exp_id);
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
  ASSERT_TRUE(master_->allocations()->RegisterAgent("a1", agent).ok());
  auto open = OpenStore()->ListOpenAllocations();
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 2u);
  json running = json::array();
  for (const store::AllocationRow& a : *open) {
    ASSERT_TRUE(
        master_->allocations()
            ->HandleAgentEvents(
                "a1", {{"events",
                        {{{"type", "started"}, {"allocationId", a.allocation_id}, {"pid", 100}}}}})
            .ok());
    running.push_back(a.allocation_id);
  }
  const store::AllocationRow& first = open->front();
  // Rung 0 of the first trial: nothing to promote yet, so no operation for it.
  ASSERT_TRUE(master_->experiments()->CompleteSearcherOperation(first.trial_id, 50, 0.1).ok());
  StopMaster();

  StartMaster();
  agent["running"] = running;
  ASSERT_TRUE(master_->allocations()->RegisterAgent("a1", agent).ok());
  ASSERT_TRUE(
      master_->allocations()
          ->HandleAgentEvents(
              "a1",
              {{"events",
                {{{"type", "exited"}, {"allocationId", first.allocation_id}, {"exitCode", 0}}}}})
          .ok());
  auto trial = master_->experiments()->GetTrial(first.trial_id);
  ASSERT_TRUE(trial.ok());
  EXPECT_EQ(trial->row.state, "ACTIVE") << "the trial waits for the searcher, it is not done";
}

// The lost promotion (issue #33): trial A finishes its rung, is told "no operation for now" and
// its process leaves; before its exit arrives, trial B's result promotes A. The exit must not
// complete A with the promotion pending: A runs again, without counting a restart.
TEST_F(MasterRestoreTest, APromotionGivenBeforeTheToldNoneExitArrivesRunsAgain) {
  StartMaster();
  Create(
      "entrypoint: python3 train.py\n"
      "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
      "searcher: {name: async_halving, metric: loss, num_rungs: 2, divisor: 2, max_trials: 2,\n"
      "           max_concurrent_trials: 2, max_length: {batches: 100}}\n");
  json agent = {{"slots", {{{"id", 0}, {"type", "cpu"}}, {{"id", 1}, {"type", "cpu"}}}}};
  ASSERT_TRUE(master_->allocations()->RegisterAgent("a1", agent).ok());
  auto open = OpenStore()->ListOpenAllocations();
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 2u);
  for (const store::AllocationRow& a : *open) {
    ASSERT_TRUE(
        master_->allocations()
            ->HandleAgentEvents(
                "a1", {{"events",
                        {{{"type", "started"}, {"allocationId", a.allocation_id}, {"pid", 100}}}}})
            .ok());
  }
  const store::AllocationRow a = open->at(0);
  const store::AllocationRow b = open->at(1);
  ASSERT_TRUE(master_->experiments()->CompleteSearcherOperation(a.trial_id, 50, 0.1).ok());
  const Result<SearcherOpView> none = SearcherOp(master_.get(), a.trial_id);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  ASSERT_FALSE(none->length.has_value()) << "nothing to promote with one result";
  // B's worse result promotes A while A's process is on its way out.
  ASSERT_TRUE(master_->experiments()->CompleteSearcherOperation(b.trial_id, 50, 0.9).ok());
  ASSERT_TRUE(
      master_->allocations()
          ->HandleAgentEvents(
              "a1", {{"events",
                      {{{"type", "exited"}, {"allocationId", a.allocation_id}, {"exitCode", 0}}}}})
          .ok());
  auto trial = master_->experiments()->GetTrial(a.trial_id);
  ASSERT_TRUE(trial.ok());
  EXPECT_EQ(trial->row.state, "ACTIVE") << "the promoted trial must run its next rung";
  EXPECT_EQ(trial->row.restarts, 0) << "a run the searcher asked for is no restart";
  const Result<SearcherOpView> next = SearcherOp(master_.get(), a.trial_id);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(next->length.has_value());
  EXPECT_EQ(*next->length, 100u);
  // A pending allocation has no row until it is placed: the agent's freed slot takes it.
  bool placed_again = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!placed_again && std::chrono::steady_clock::now() < deadline) {
    auto reopened = OpenStore()->ListOpenAllocations();
    ASSERT_TRUE(reopened.ok());
    for (const store::AllocationRow& r : *reopened) {
      placed_again |= r.trial_id == a.trial_id && r.allocation_id != a.allocation_id;
    }
    if (!placed_again) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(placed_again) << "the promoted trial has a new allocation";
}

// Allocation tokens are stored as their digest. A pending allocation has no row, but an earlier
// version stored one with the digest of a token made at creation: restored, such an allocation
// starts with a new token, which authenticates it, and its old digest is no token.
TEST_F(MasterRestoreTest, ARestoredPendingAllocationStartsWithANewToken) {
  StartMaster();
  int64_t exp_id = Create(kRandomTwo);
  ASSERT_TRUE(OpenStore()->ListOpenAllocations()->empty()) << "pending allocations have no row";
  StopMaster();
  std::map<std::string, std::string> old_digest;
  {
    auto st = OpenStore();
    auto trials = st->ListTrials(exp_id);
    ASSERT_TRUE(trials.ok());
    ASSERT_EQ(trials->size(), 2u);
    for (const store::TrialRow& t : *trials) {
      store::AllocationRow a;
      a.allocation_id = t.task_id + "." + std::to_string(t.run_id);
      a.task_id = t.task_id;
      a.trial_id = t.id;
      a.state = "PENDING";
      a.token = store::AllocationTokenDigest("token-of-" + a.allocation_id);
      a.slots = 1;
      a.start_time = clock_.NowMicros();
      ASSERT_TRUE(st->UpsertAllocation(a).ok());
      old_digest[a.allocation_id] = a.token;
    }
  }

  StartMaster();
  json agent = {{"slots", {{{"id", 0}, {"type", "cpu"}}, {{"id", 1}, {"type", "cpu"}}}}};
  ASSERT_TRUE(master_->allocations()->RegisterAgent("a1", agent).ok());
  std::optional<Result<json>> polled;
  master_->allocations()->PollCommands("a1", 0, 0,
                                       [&](Result<json> r) { polled.emplace(std::move(r)); });
  ASSERT_TRUE(polled.has_value() && polled->ok());
  const json& commands = (**polled)["commands"];
  ASSERT_EQ(commands.size(), 2u);
  auto after = OpenStore()->ListOpenAllocations();
  ASSERT_TRUE(after.ok());
  std::map<std::string, std::string> stored;
  for (const store::AllocationRow& a : *after) stored[a.allocation_id] = a.token;
  for (const json& start : commands) {
    const std::string id = start["allocationId"];
    const std::string token = start["env"]["DET_SESSION_TOKEN"];
    ASSERT_TRUE(old_digest.count(id)) << id << ": the restored allocation is started";
    EXPECT_EQ(stored[id], store::AllocationTokenDigest(token));
    EXPECT_NE(stored[id], old_digest[id]);
    Result<Principal> who = master_->auth()->AuthenticateAllocationToken(token);
    ASSERT_TRUE(who.ok()) << who.status().ToString();
    EXPECT_EQ(who->allocation_id, id);
    EXPECT_FALSE(master_->auth()->AuthenticateAllocationToken("token-of-" + id).ok());
  }
}

// The searcher state as a restart would see it: the stored full snapshot, the journal merged in
// and its events replayed, as snapshot text.
std::string RestoredSearcherText(store::Store* st, int64_t exp_id) {
  auto row = st->GetExperiment(exp_id);
  EXPECT_TRUE(row.ok());
  auto cfg = config::ExperimentConfigFromJson(row->config);
  EXPECT_TRUE(cfg.ok());
  SearcherJournalService journal(st);
  auto text = st->GetExperimentSnapshotText(exp_id);
  EXPECT_TRUE(text.ok());
  auto loaded = journal.Load(exp_id, nlohmann::json::parse(*text));
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto s = searcher::Searcher::Restore(*cfg, loaded->snapshot["searcher"]);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(searcher::JournaledSearcher::Replay(**s, loaded->events).ok());
  return (*s)->Snapshot().dump() + loaded->snapshot["trials"].dump();
}

// One step of a cluster that finishes operations in trial-id order: the first trial with an
// operation completes it (metric from its id). Returns what the master decided, as text: every
// trial's request id, hyperparameters, state and next operation.
std::string StepSearch(Master* m, int64_t exp_id) {
  auto trials = m->experiments()->ListTrials(exp_id);
  EXPECT_TRUE(trials.ok());
  bool stepped = false;
  for (const TrialView& t : *trials) {
    if (stepped) break;
    std::optional<Result<SearcherOpView>> op = SearcherOp(m, t.row.id);
    if (!op || !op->ok() || !(*op)->length) continue;
    double metric = static_cast<double>((t.row.id * 7919) % 101) / 100.0;
    Status done = m->experiments()->CompleteSearcherOperation(t.row.id, *(*op)->length, metric);
    EXPECT_TRUE(done.ok()) << done.ToString();
    stepped = true;
  }
  std::string seen;
  trials = m->experiments()->ListTrials(exp_id);
  for (const TrialView& t : *trials) {
    std::optional<Result<SearcherOpView>> op = SearcherOp(m, t.row.id);
    seen += std::to_string(t.row.id) + " " + t.row.request_id + " " + t.row.hparams.dump() + " " +
            t.row.state +
            " op=" + (op && op->ok() && (*op)->length ? std::to_string(*(*op)->length) : "-") +
            "\n";
  }
  return seen;
}

// kill -9 between a decision and the next full snapshot: the store holds the full snapshot
// and a journal after it. A master started on an image of that store (copied while the first
// master is idle, as a kill leaves the files) must decide exactly as the uninterrupted master
// from there on: same trials, same request ids and hyperparameters, same operations, and the
// same searcher state at the end.
TEST_F(MasterRestoreTest, KilledBetweenJournalAndFullSnapshotDecidesAsTheUninterruptedMaster) {
  StartMaster();
  int64_t exp_id = Create(
      "entrypoint: python3 train.py\n"
      "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
      "searcher: {name: adaptive_asha, metric: loss, max_trials: 12, max_concurrent_trials: 4,\n"
      "           max_length: {batches: 64}, divisor: 2}\n");
  for (int i = 0; i < 9; ++i) StepSearch(master_.get(), exp_id);
  {
    auto st = OpenStore();
    auto journal = st->ListSearcherEvents(exp_id);
    ASSERT_TRUE(journal.ok());
    ASSERT_FALSE(journal->empty()) << "the kill must fall between a journal record and the "
                                      "next full snapshot";
  }
  // The crash image: the database files as they are now.
  fs::path image = dir_ / "image";
  fs::create_directories(image);
  for (const char* f : {"determined.db", "determined.db-wal", "determined.db-shm"}) {
    if (fs::exists(dir_ / f)) fs::copy_file(dir_ / f, image / f);
  }
  MasterConfig config;
  config.data_dir = image.string();
  ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
  auto image_store = store::SqliteStore::Open((image / "determined.db").string());
  ASSERT_TRUE(image_store.ok());
  auto restarted = std::make_unique<Master>(config, std::move(image_store).value(), &clock_);
  ASSERT_TRUE(restarted->Start().ok());

  for (int i = 0; i < 60; ++i) {
    std::string want = StepSearch(master_.get(), exp_id);
    std::string got = StepSearch(restarted.get(), exp_id);
    ASSERT_EQ(got, want) << "step " << i << " after the restart";
  }
  restarted->Stop();
  restarted.reset();
  auto exp = master_->experiments()->GetExperiment(exp_id);
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(exp->row.state, "COMPLETED") << "60 steps finish the 12-trial search";
  auto live = OpenStore();
  auto copy = store::SqliteStore::Open((image / "determined.db").string());
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(RestoredSearcherText(copy->get(), exp_id), RestoredSearcherText(live.get(), exp_id));
}

}  // namespace
}  // namespace det::master::server
