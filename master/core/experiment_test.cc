// core::Experiment driven event by event, with a scripted searcher: what each decision writes
// and which effects it releases.
#include "master/core/experiment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace det::master::core {
namespace {

using searcher::Action;
using searcher::CloseAction;
using searcher::CreateAction;
using searcher::ShutdownAction;
using searcher::ValidateAfterAction;
using Kind = ProcessEffect::Kind;

// Answers each event with the actions scripted for it, and records what it was told.
class ScriptedSearcher : public searcher::Searcher {
 public:
  std::vector<Action> initial;
  std::map<std::string, std::vector<Action>> on_completed;  // "a 10" -> actions
  std::vector<std::string>* told;

  explicit ScriptedSearcher(std::vector<std::string>* log) : told(log) {}

  std::vector<Action> InitialOperations() override { return initial; }
  std::vector<Action> TrialCreated(const std::string& rid) override {
    told->push_back("created " + rid);
    return {};
  }
  Result<std::vector<Action>> ValidationCompleted(const std::string& rid, double,
                                                  uint64_t length) override {
    std::string key = rid + " " + std::to_string(length);
    told->push_back("completed " + key);
    auto it = on_completed.find(key);
    return it == on_completed.end() ? std::vector<Action>{} : it->second;
  }
  std::vector<Action> TrialExitedEarly(const std::string& rid, searcher::ExitedReason) override {
    told->push_back("exited early " + rid);
    return {};
  }
  std::vector<Action> TrialExited(const std::string& rid) override {
    told->push_back("exited " + rid);
    return {};
  }
  void SetTrialProgress(const std::string&, double) override {}
  double Progress() const override { return 0.5; }
  nlohmann::json Snapshot() const override { return nlohmann::json::object(); }
  std::unique_ptr<Searcher> Clone() const override {
    return std::make_unique<ScriptedSearcher>(*this);
  }
};

CreateAction Create(const std::string& rid) { return CreateAction{rid, 1, {}, std::nullopt}; }

class ExperimentTest : public ::testing::Test {
 protected:
  // Two trials, a and b, each to validate after 10.
  void SetUp() override {
    auto s = std::make_unique<ScriptedSearcher>(&told_);
    s->initial = {Create("a"), Create("b"), ValidateAfterAction{"a", 10},
                  ValidateAfterAction{"b", 10}};
    script_ = s.get();
    ExperimentRules rules;
    rules.max_restarts = 2;
    exp_.emplace(std::move(s), rules);
  }

  Decision Decide(const ExperimentEvent& e) {
    Result<Decision> d = exp_->Decide(e);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : Decision{};
  }

  // Activated, both trials placed.
  void Start() {
    Decide(Activate{});
    Decide(Placed{"a"});
    Decide(Placed{"b"});
  }

  const Trial& T(const std::string& rid) { return *exp_->Find(rid); }

  std::vector<std::string> told_;
  ScriptedSearcher* script_ = nullptr;
  std::optional<Experiment> exp_;
};

TEST_F(ExperimentTest, FirstActivationCreatesTheTrialsAndQueuesTheirRuns) {
  Decision d = Decide(Activate{});
  EXPECT_EQ(d.experiment_to, RunState::kActive);
  ASSERT_EQ(d.created.size(), 2u);
  EXPECT_EQ(d.created[0].request_id, "a");
  EXPECT_EQ(d.processes,
            (std::vector<ProcessEffect>{{Kind::kRequest, "a"}, {Kind::kRequest, "b"}}));
  EXPECT_EQ(d.searcher_changed, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(d.searcher_heard);
  EXPECT_EQ(T("a").presence, TrialPresence::kQueued);
  EXPECT_EQ(T("a").searcher.ops, std::vector<uint64_t>{10});
  EXPECT_TRUE(exp_->initialized());
  // A second activation of an active experiment decides nothing.
  EXPECT_TRUE(Decide(Activate{}).empty());
}

TEST_F(ExperimentTest, PauseStopsTheRunningDropsTheQueuedAndTellsTheSearcherNothing) {
  Decide(Activate{});
  Decide(Placed{"a"});
  size_t told = told_.size();
  Decision d = Decide(Pause{});
  EXPECT_EQ(d.experiment_to, RunState::kPaused);
  ASSERT_EQ(d.moves.size(), 2u);
  EXPECT_EQ(d.moves[0].to, RunState::kPaused);
  EXPECT_EQ(d.processes, (std::vector<ProcessEffect>{{Kind::kStop, "a"}, {Kind::kDrop, "b"}}));
  EXPECT_EQ(told_.size(), told);
  EXPECT_EQ(T("b").presence, TrialPresence::kNone);
  // The stopped process exits after acknowledging: the trial waits, paused, with no new run.
  ProcessEnd acked;
  acked.preemption_acked = true;
  d = Decide(ProcessExited{"a", acked});
  EXPECT_EQ(d.exit->decision, ExitDecision::kIdle);
  EXPECT_TRUE(d.processes.empty());
  // Activation: both back to ACTIVE, each with a new run.
  d = Decide(Activate{});
  EXPECT_EQ(d.processes,
            (std::vector<ProcessEffect>{{Kind::kRequest, "a"}, {Kind::kRequest, "b"}}));
  EXPECT_EQ(T("a").state, RunState::kActive);
}

// The lost promotion of issue #33, as events: a's process is told "no operation for now" and
// is on its way out when b's completion promotes a. Its exit must run it again, uncounted.
TEST_F(ExperimentTest, AnOperationGivenAfterTheProcessWasToldNoneRunsTheTrialAgain) {
  script_->on_completed["b 10"] = {ValidateAfterAction{"a", 30}, CloseAction{"b"}};
  Start();
  Decide(CompleteOperation{"a", 1, 10, 0.5});
  ASSERT_EQ(exp_->Answer("a")->kind, OpAnswerKind::kNoneForNow);
  Decision d = Decide(CompleteOperation{"b", 2, 10, 0.4});
  EXPECT_EQ(d.completion, CompletionKind::kApply);
  EXPECT_EQ(d.processes, (std::vector<ProcessEffect>{{Kind::kStop, "b"}}));
  EXPECT_EQ(T("a").searcher.ops, std::vector<uint64_t>{30});
  ProcessEnd told_none;
  told_none.told_none = true;
  d = Decide(ProcessExited{"a", told_none});
  EXPECT_EQ(d.exit->decision, ExitDecision::kRescheduleFree);
  EXPECT_EQ(d.processes, (std::vector<ProcessEffect>{{Kind::kRequest, "a"}}));
  EXPECT_TRUE(d.restarts_changed.empty());
  EXPECT_EQ(T("a").state, RunState::kActive);
  EXPECT_FALSE(T("a").searcher.searcher_exited);
  for (const std::string& line : told_) EXPECT_NE(line, "exited a");
}

TEST_F(ExperimentTest, AnExitAfterTheSearcherClosedTheLastTrialCompletesTheExperiment) {
  script_->on_completed["a 10"] = {CloseAction{"a"}};
  script_->on_completed["b 10"] = {CloseAction{"b"}, ShutdownAction{}};
  Start();
  Decide(CompleteOperation{"a", 1, 10, 0.5});
  Decision d = Decide(ProcessExited{"a", ProcessEnd{}});
  EXPECT_EQ(d.exit->decision, ExitDecision::kComplete);
  EXPECT_EQ(d.moves.size(), 1u);
  EXPECT_FALSE(d.experiment_to);  // b is still live
  Decide(CompleteOperation{"b", 2, 10, 0.4});
  d = Decide(ProcessExited{"b", ProcessEnd{}});
  EXPECT_EQ(d.experiment_to, RunState::kCompleted);
  EXPECT_EQ(exp_->state(), RunState::kCompleted);
  EXPECT_NE(std::find(told_.begin(), told_.end(), "exited b"), told_.end());
}

TEST_F(ExperimentTest, KillEndsAQueuedTrialAtOnceAndKillsARunningOne) {
  Decide(Activate{});
  Decide(Placed{"a"});
  Decision d = Decide(Stop{RunState::kStoppingKilled});
  EXPECT_EQ(d.experiment_to, RunState::kStoppingKilled);
  EXPECT_EQ(d.processes, (std::vector<ProcessEffect>{{Kind::kKill, "a"}, {Kind::kDrop, "b"}}));
  EXPECT_EQ(T("a").state, RunState::kStoppingKilled);
  EXPECT_EQ(T("b").state, RunState::kCanceled);
  EXPECT_NE(std::find(told_.begin(), told_.end(), "exited early b"), told_.end());
  ProcessEnd killed;
  killed.exit_code = 137;
  killed.killed_by_user = true;
  d = Decide(ProcessExited{"a", killed});
  EXPECT_EQ(T("a").state, RunState::kCanceled);
  EXPECT_EQ(d.experiment_to, RunState::kCanceled);
}

TEST_F(ExperimentTest, ACrashWithinMaxRestartsRunsAgainAndCountsARestart) {
  Start();
  ProcessEnd crash;
  crash.exit_code = 1;
  Decision d = Decide(ProcessExited{"a", crash});
  EXPECT_EQ(d.exit->decision, ExitDecision::kRestart);
  EXPECT_EQ(d.restarts_changed, std::vector<std::string>{"a"});
  EXPECT_EQ(d.processes, (std::vector<ProcessEffect>{{Kind::kRequest, "a"}}));
  EXPECT_EQ(T("a").restarts, 1);
}

TEST_F(ExperimentTest, RefusalsChangeNothing) {
  Start();
  Result<Decision> wrong = exp_->Decide(CompleteOperation{"a", 7, 20, 0.5});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("op.length"), std::string::npos);
  EXPECT_NE(wrong.status().message().find("trial 7"), std::string::npos);
  EXPECT_EQ(T("a").searcher.ops, std::vector<uint64_t>{10});
  Result<Decision> nan = exp_->Decide(CompleteOperation{"a", 7, 10, std::nan("")});
  EXPECT_FALSE(nan.ok());
  EXPECT_EQ(T("a").searcher.completed_op, 0u);
  Decide(EarlyExit{"a", 7, searcher::ExitedReason::kInvalidHp});
  Result<Decision> twice = exp_->Decide(EarlyExit{"a", 7, searcher::ExitedReason::kInvalidHp});
  EXPECT_FALSE(twice.ok());
  EXPECT_FALSE(exp_->Decide(Placed{"a"}).ok());  // placed already
}

TEST_F(ExperimentTest, ARetriedCompletionIsANoOp) {
  Start();
  Decide(CompleteOperation{"a", 1, 10, 0.5});
  size_t told = told_.size();
  Decision d = Decide(CompleteOperation{"a", 1, 10, 0.5});
  EXPECT_EQ(d.completion, CompletionKind::kAlreadyStored);
  EXPECT_EQ(told_.size(), told);
}

TEST_F(ExperimentTest, AnEndedExperimentRefusesActivation) {
  Decide(Activate{});
  Decide(Stop{RunState::kStoppingCanceled});  // both queued: canceled at once
  EXPECT_EQ(exp_->state(), RunState::kCanceled);
  Result<Decision> d = exp_->Decide(Activate{});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(exp_->state(), RunState::kCanceled);
}

}  // namespace
}  // namespace det::master::core
