// Store::ApplyDecision: a decision's rows are written together or not at all.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "master/store/decision_writes.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"
#include "master/store/test_rows.h"

namespace det::master::store {
namespace {

class DecisionWritesTest : public store_test::StoreTest {
 protected:
  DecisionWritesTest() : StoreTest("det_store_sched_test_") {}
  void SetUp() override {
    StoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto id = store_test::InsertTestExperiment(store_.get(), "PAUSED");
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    exp_id_ = *id;
  }

  TrialRow NewTrial(const std::string& request_id) {
    TrialRow t = store_test::TestTrialRow(exp_id_, request_id);
    t.hparams = {{"x", 1}};
    t.run_id = 1;
    return t;
  }

  // The row of the allocation that placed the trial `trial_id` (task `task_id`).
  AllocationRow Assigned(const std::string& task_id, int64_t trial_id) {
    AllocationRow a;
    a.allocation_id = task_id + ".1";
    a.task_id = task_id;
    a.trial_id = trial_id;
    a.state = "ASSIGNED";
    a.token = "digest-" + task_id;
    a.slots = 1;
    return a;
  }

  int64_t exp_id_ = 0;
};

TEST_P(DecisionWritesTest, NewTrialsGetIdsInOrder) {
  DecisionWrites w;
  for (int i = 0; i < 100; ++i) w.new_trials.push_back(NewTrial("r" + std::to_string(i)));
  w.experiment_state = ExperimentStateWrite{exp_id_, "ACTIVE", std::nullopt};
  w.experiment_progress = ExperimentProgressWrite{exp_id_, 0.25};
  auto ids = store_->ApplyDecision(w);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_EQ(ids->size(), 100u);
  for (size_t i = 1; i < ids->size(); ++i) EXPECT_LT((*ids)[i - 1], (*ids)[i]);
  EXPECT_EQ(*store_->CountTrials(exp_id_), 100);
  auto t = store_->GetTrial((*ids)[7]);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->request_id, "r7");
  auto e = store_->GetExperiment(exp_id_);
  EXPECT_EQ(e->state, "ACTIVE");
  EXPECT_DOUBLE_EQ(e->progress, 0.25);
}

TEST_P(DecisionWritesTest, TrialRunWriteSetsOnlyItsFields) {
  DecisionWrites create;
  create.new_trials.push_back(NewTrial("r"));
  auto ids = store_->ApplyDecision(create);
  ASSERT_TRUE(ids.ok());
  int64_t id = ids->front();
  TrialRow row = *store_->GetTrial(id);
  row.runner_state = "validating";
  ASSERT_TRUE(store_->UpdateTrial(row).ok());

  DecisionWrites w;
  w.trials.push_back(TrialRunWrite{id, std::nullopt, 3, 2, std::nullopt});
  ASSERT_TRUE(store_->ApplyDecision(w).ok());
  auto t = store_->GetTrial(id);
  EXPECT_EQ(t->state, "ACTIVE");
  EXPECT_EQ(t->run_id, 3);
  EXPECT_EQ(t->restarts, 2);
  EXPECT_FALSE(t->end_time.has_value());
  EXPECT_EQ(t->runner_state, "validating") << "fields the write does not name stay";

  w.trials = {TrialRunWrite{id, std::string("COMPLETED"), 3, 2, int64_t{99}}};
  ASSERT_TRUE(store_->ApplyDecision(w).ok());
  t = store_->GetTrial(id);
  EXPECT_EQ(t->state, "COMPLETED");
  EXPECT_EQ(t->end_time, 99);
}

TEST_P(DecisionWritesTest, AFailingWriteLeavesNothingOfItsDecision) {
  DecisionWrites first;
  first.new_trials.push_back(NewTrial("a"));
  auto created = store_->ApplyDecision(first);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  DecisionWrites w;
  w.new_trials.push_back(NewTrial("b"));
  w.new_trials.push_back(NewTrial("c"));
  w.allocations.push_back(Assigned(std::to_string(exp_id_) + ".a", created->front()));
  w.experiment_state = ExperimentStateWrite{exp_id_, "ACTIVE", std::nullopt};
  w.trials.push_back(TrialRunWrite{987654, std::string("ACTIVE"), 1, 0, std::nullopt});
  auto ids = store_->ApplyDecision(w);
  ASSERT_FALSE(ids.ok());
  EXPECT_NE(ids.status().message().find("trial 987654"), std::string::npos)
      << ids.status().ToString();
  EXPECT_EQ(*store_->CountTrials(exp_id_), 1);
  EXPECT_FALSE(store_->GetAllocation(std::to_string(exp_id_) + ".a.1").ok());
  EXPECT_EQ(store_->GetExperiment(exp_id_)->state, "PAUSED");

  w.trials.clear();
  ASSERT_TRUE(store_->ApplyDecision(w).ok());
  auto a = store_->GetAllocation(std::to_string(exp_id_) + ".a.1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->trial_id, created->front());
  EXPECT_EQ(a->state, "ASSIGNED");
  EXPECT_EQ(*store_->CountTrials(exp_id_), 3);
}

TEST_P(DecisionWritesTest, TrialMetadataWriteSetsOnlyTheMetadata) {
  DecisionWrites create;
  create.new_trials.push_back(NewTrial("m"));
  auto ids = store_->ApplyDecision(create);
  ASSERT_TRUE(ids.ok());
  int64_t id = ids->front();
  DecisionWrites w;
  w.trial_metadata.push_back({id, {{"k", "v"}}});
  ASSERT_FALSE(w.empty());
  ASSERT_TRUE(store_->ApplyDecision(w).ok());
  auto t = store_->GetTrial(id);
  EXPECT_EQ(t->metadata, nlohmann::json({{"k", "v"}}));
  EXPECT_EQ(t->state, "ACTIVE");
  EXPECT_EQ(t->run_id, 1);

  w.trial_metadata = {{987654, {{"k", "v"}}}};
  auto missing = store_->ApplyDecision(w);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "trial 987654 not found");
}

TEST_P(DecisionWritesTest, RunQueuedAtIsStoredWithTheTrialAndSetOnlyWhenARunIsQueued) {
  DecisionWrites create;
  create.new_trials.push_back(NewTrial("q"));
  create.new_trials.back().run_queued_at = 1000;
  auto ids = store_->ApplyDecision(create);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  const int64_t id = ids->front();
  EXPECT_EQ(store_->GetTrial(id)->run_queued_at, 1000);

  DecisionWrites ended;
  ended.trials.push_back(TrialRunWrite{id, std::string("PAUSED"), 1, 0, std::nullopt});
  ASSERT_TRUE(store_->ApplyDecision(ended).ok());
  EXPECT_EQ(store_->GetTrial(id)->run_queued_at, 1000) << "a write that queues no run keeps it";

  DecisionWrites again;
  again.trials.push_back(TrialRunWrite{id, std::string("ACTIVE"), 2, 0, std::nullopt});
  again.trials.back().run_queued_at = 2500;
  ASSERT_TRUE(store_->ApplyDecision(again).ok());
  auto rows = store_->ListTrials(exp_id_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().run_queued_at, 2500);
  EXPECT_EQ(rows->front().run_id, 2);
}

TEST_P(DecisionWritesTest, ListExperimentAllocationIdsNamesEveryRowOfItsTrialsAlone) {
  auto other = store_test::InsertTestExperiment(store_.get());
  ASSERT_TRUE(other.ok());
  DecisionWrites create;
  create.new_trials.push_back(NewTrial("a"));
  create.new_trials.push_back(NewTrial("b"));
  create.new_trials.push_back(store_test::TestTrialRow(*other, "c"));
  auto ids = store_->ApplyDecision(create);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  DecisionWrites placed;
  placed.allocations.push_back(Assigned("t-a", (*ids)[0]));
  AllocationRow closed = Assigned("t-b", (*ids)[1]);
  closed.state = "TERMINATED";
  closed.end_time = 5;
  placed.allocations.push_back(closed);
  placed.allocations.push_back(Assigned("t-c", (*ids)[2]));
  ASSERT_TRUE(store_->ApplyDecision(placed).ok());

  auto mine = store_->ListExperimentAllocationIds(exp_id_);
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  EXPECT_EQ(*mine, (std::vector<std::string>{"t-a.1", "t-b.1"})) << "open and closed alike";
  auto theirs = store_->ListExperimentAllocationIds(*other);
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(*theirs, (std::vector<std::string>{"t-c.1"}));
  auto none = store_->ListExperimentAllocationIds(987654);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

DET_STORE_BACKENDS(DecisionWritesTest);

}  // namespace
}  // namespace det::master::store
