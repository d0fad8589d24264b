// A large search through the Master over a real SQLite store: its trials are stored as one
// decision and queued (a pending allocation has no row until it is placed), survive a restart
// without being created or queued twice, and are placed and stopped in batches.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/server/master.h"
#include "master/server/master_sqlite_fixture.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kTrials = 500;

class LargeSearchTest : public MasterOverSqliteTest {
 protected:
  LargeSearchTest() : MasterOverSqliteTest("det-large-search-") {}

  int64_t CreateLargeSearch() {
    return Create(
        "entrypoint: python3 train.py\n"
        "hyperparameters: {x: {type: double, minval: 0, maxval: 1}}\n"
        "searcher: {name: random, metric: loss, max_trials: " +
        std::to_string(kTrials) + ", max_concurrent_trials: " + std::to_string(kTrials) +
        ",\n           max_length: {batches: 10}}\n");
  }

  std::map<std::string, int> AllocationStates() {
    std::map<std::string, int> out;
    for (const AllocationSummaryView& a : master_->allocations()->ListAllocations()) out[a.state]++;
    return out;
  }

  // When each allocation the runtime holds was queued (`det task list`'s registered time).
  std::map<std::string, int64_t> RegisteredTimes() {
    std::map<std::string, int64_t> out;
    for (const AllocationSummaryView& a : master_->allocations()->ListAllocations()) {
      out[a.allocation_id] = a.registered_time;
    }
    return out;
  }

  // The allocations the runtime holds, by trial.
  std::map<int64_t, std::vector<std::string>> AllocationsPerTrial() {
    std::map<int64_t, std::vector<std::string>> out;
    for (const AllocationSummaryView& a : master_->allocations()->ListAllocations()) {
      out[a.trial_id].push_back(a.allocation_id);
    }
    return out;
  }
};

TEST_F(LargeSearchTest, EveryTrialIsStoredAndQueuedOnceAcrossARestart) {
  StartMaster();
  int64_t exp_id = CreateLargeSearch();
  ASSERT_GT(exp_id, 0);
  auto exp = master_->experiments()->GetExperiment(exp_id);
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(exp->row.state, "ACTIVE");
  EXPECT_EQ(exp->num_trials, kTrials);
  EXPECT_EQ(AllocationStates(), (std::map<std::string, int>{{"STATE_PENDING", kTrials}}));
  const std::map<int64_t, std::vector<std::string>> queued = AllocationsPerTrial();
  EXPECT_EQ(queued.size(), static_cast<size_t>(kTrials)) << "one allocation per trial";
  EXPECT_EQ(queued.count(0), 0u) << "every allocation names its stored trial";
  auto open = OpenStore()->ListOpenAllocations();
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty()) << "pending allocations have no rows";
  auto rows = OpenStore()->ListTrials(exp_id);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), static_cast<size_t>(kTrials));
  for (const store::TrialRow& t : *rows) ASSERT_EQ(t.run_id, 1) << "queued for its first run";
  const std::map<std::string, int64_t> registered = RegisteredTimes();
  for (const store::TrialRow& t : *rows) {
    ASSERT_EQ(registered.at(t.task_id + ".1"), t.run_queued_at) << "the stored queue time";
  }

  master_->Stop();
  master_.reset();
  clock_.Advance(7'000'000);
  StartMaster();
  exp = master_->experiments()->GetExperiment(exp_id);
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(exp->num_trials, kTrials) << "a restore creates no trial twice";
  EXPECT_EQ(AllocationStates(), (std::map<std::string, int>{{"STATE_PENDING", kTrials}}));
  EXPECT_EQ(AllocationsPerTrial(), queued)
      << "every trial queued once again, as the same run (its allocation never placed)";
  EXPECT_EQ(RegisteredTimes(), registered) << "queued when it was first queued, not at restart";
  rows = OpenStore()->ListTrials(exp_id);
  ASSERT_TRUE(rows.ok());
  for (const store::TrialRow& t : *rows) ASSERT_EQ(t.run_id, 1) << "no new run for a restart";
}

// A run queued after the experiment's creation (here: paused, then activated, so each trial gets
// run 2) keeps the time of that queueing across a restart, stored with its trial row.
TEST_F(LargeSearchTest, ARunQueuedAgainKeepsItsQueueTimeAcrossARestart) {
  StartMaster();
  int64_t exp_id = CreateLargeSearch();
  ASSERT_TRUE(master_->experiments()->PauseExperiment(exp_id).ok());
  EXPECT_TRUE(AllocationStates().empty()) << "a paused experiment queues nothing";
  clock_.Advance(3'000'000);
  const int64_t activated = clock_.NowMicros();
  ASSERT_TRUE(master_->experiments()->ActivateExperiment(exp_id).ok());
  const std::map<std::string, int64_t> registered = RegisteredTimes();
  ASSERT_EQ(registered.size(), static_cast<size_t>(kTrials));
  for (const auto& [id, at] : registered) {
    ASSERT_EQ(id.substr(id.size() - 2), ".2") << "run 2 of its trial";
    ASSERT_EQ(at, activated) << id;
  }

  master_->Stop();
  master_.reset();
  clock_.Advance(5'000'000);
  StartMaster();
  EXPECT_EQ(RegisteredTimes(), registered);
  auto rows = OpenStore()->ListTrials(exp_id);
  ASSERT_TRUE(rows.ok());
  for (const store::TrialRow& t : *rows) {
    ASSERT_EQ(t.run_id, 2) << "no new run for a restart";
    ASSERT_EQ(t.run_queued_at, activated);
  }
}

TEST_F(LargeSearchTest, AnAgentGetsWorkInItsRegistrationAndAKillEndsTheQueue) {
  StartMaster();
  int64_t exp_id = CreateLargeSearch();
  json agent = {{"slots", {{{"id", 0}, {"type", "cpu"}}, {{"id", 1}, {"type", "cpu"}}}}};
  ASSERT_TRUE(master_->allocations()->RegisterAgent("a1", agent).ok());
  // The registration ran the scheduling pass it asked for: two trials are placed already.
  EXPECT_EQ(AllocationStates(),
            (std::map<std::string, int>{{"STATE_ASSIGNED", 2}, {"STATE_PENDING", kTrials - 2}}));
  std::optional<Result<json>> polled;
  master_->allocations()->PollCommands("a1", 0, 0,
                                       [&](Result<json> r) { polled.emplace(std::move(r)); });
  ASSERT_TRUE(polled.has_value()) << "a poll with commands waiting answers at once";
  ASSERT_TRUE(polled->ok()) << polled->status().ToString();
  ASSERT_EQ((**polled)["commands"].size(), 2u);
  EXPECT_EQ((**polled)["commands"][0]["type"], "start");

  ASSERT_TRUE(master_->experiments()->KillExperiment(exp_id).ok());
  std::map<std::string, int> states;
  auto trials = OpenStore()->ListTrials(exp_id);
  ASSERT_TRUE(trials.ok());
  for (const store::TrialRow& t : *trials) states[t.state]++;
  EXPECT_EQ(states, (std::map<std::string, int>{{"CANCELED", kTrials - 2}, {"STOPPING_KILLED", 2}}))
      << "queued trials end at once; the two running ones are being killed";
  EXPECT_EQ(AllocationStates(), (std::map<std::string, int>{{"STATE_ASSIGNED", 2}}));
}

}  // namespace
}  // namespace det::master::server
