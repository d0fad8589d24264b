// The experiments and allocations services over a fake store and clock: no database, no
// sockets, no sleeps. The runtime loop is never started, so every decision runs on the test's
// thread as it is asked for, and the test runs the scheduling pass itself when one is due.

#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "master/server/agent_admin_service.h"
#include "master/server/allocation_service.h"
#include "master/server/checkpoint_service.h"
#include "master/server/experiment_service.h"
#include "master/server/fake_runtime_store.h"
#include "master/server/task_service.h"
#include "master/server/unmanaged_service.h"

namespace det::master::server {
namespace {

using nlohmann::json;

constexpr char kSearch[] =
    "name: three\n"
    "entrypoint: python3 train.py\n"
    "searcher: {name: random, metric: loss, max_trials: 3, max_concurrent_trials: 3,\n"
    "           max_length: {batches: 10}}\n"
    "hyperparameters: {lr: {type: double, minval: 0.001, maxval: 0.1}}\n"
    "max_restarts: 0\n";

MasterConfig TestConfig() {
  MasterConfig config;
  config.data_dir = "/nonexistent-runtime-services-test";
  EXPECT_TRUE(FinalizeMasterConfig(&config).ok());
  return config;
}

// Every service of the runtime, wired as the Master wires them, over `store`.
struct Runtime {
  explicit Runtime(FakeRuntimeStore* store, size_t trial_slice = 1000) : store(store) {
    RuntimeContext runtime;
    runtime.config = &config;
    runtime.store = store;
    runtime.clock = &clock;
    runtime.loop = &loop;
    runtime.waiters = &waiters;
    runtime.view = &view;
    runtime.logs = &logs;
    runtime.auth = &auth;
    AllocationService::Deps a{runtime};
    a.agents = &agents;
    a.tasks = &tasks;
    a.agent_admin = &agent_admin;
    allocations = std::make_unique<AllocationService>(a);
    ExperimentService::Deps e{runtime};
    e.allocations = allocations.get();
    e.checkpoints = &checkpoints;
    e.searcher_journal = &journal;
    e.unmanaged = &unmanaged;
    e.tasks = &tasks;
    e.trial_slice = trial_slice;
    experiments = std::make_unique<ExperimentService>(e);
    allocations->SetOwner(experiments.get());
    loop.SetHooks({[this] {
                     runtime_role.Assume();
                     allocations->SchedulePass();
                   },
                   [this] {
                     runtime_role.Assume();
                     allocations->Tick();
                   }});
  }
  ~Runtime() {
    waiters.Stop();
    loop.Stop();
    journal.Stop();
  }

  int64_t Create(const std::string& yaml) {
    CreateExperimentRequest req;
    req.config_yaml = yaml;
    Principal who;
    who.user_id = 1;
    who.username = "user1";
    auto created = experiments->CreateExperiment(req, who);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->experiment->id : 0;
  }
  void RegisterAgent(const std::string& id, int slots, json running = json::array()) {
    json body = {{"slots", json::array()}, {"running", running}};
    for (int i = 0; i < slots; ++i) body["slots"].push_back({{"id", i}, {"type", "cpu"}});
    auto r = allocations->RegisterAgent(id, body);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  // The agent's commands not yet acknowledged (a poll that does not wait).
  json Commands(const std::string& agent_id) {
    std::promise<Result<json>> answer;
    agents.PollCommands(agent_id, 0, 0, [&](Result<json> r) { answer.set_value(std::move(r)); });
    Result<json> r = answer.get_future().get();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["commands"] : json::array();
  }
  Status Event(const std::string& agent_id, const std::string& type, const std::string& alloc,
               int exit_code = 0) {
    json ev = {{"type", type}, {"allocationId", alloc}};
    if (type == "exited") ev["exitCode"] = exit_code;
    return allocations->HandleAgentEvents(agent_id, json{{"events", {ev}}});
  }
  std::optional<RuntimeView::Trial> Trial(int64_t id) { return view.FindTrial(id); }
  // Starts the loop's thread busy with a task that waits for the returned promise, so what
  // the test posts meanwhile queues up behind it.
  std::promise<void> StartHeldLoop() {
    loop.Start();
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    loop.Post([released] { released.wait(); });
    return release;
  }
  // Posts a task that counts the queued allocations when the loop gets to it.
  std::future<Result<size_t>> QueuedWhenRun() {
    auto count = std::make_shared<std::promise<Result<size_t>>>();
    std::future<Result<size_t>> f = count->get_future();
    loop.Post([this, count] { count->set_value(allocations->ListAllocations().size()); });
    return f;
  }
  // What a task on the released loop hands back (a Status or a Result); an error if nothing
  // came within 30 s.
  template <typename T>
  static T Await(std::future<T> f) {
    if (f.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      return T(Internal("no answer from the loop within 30 s"));
    }
    return f.get();
  }
  // What the master does at start-up, before its loop runs.
  Status Restore() {
    return loop.DecideAndWait([&]() -> Status {
      runtime_role.Assume();
      return experiments->Restore();
    });
  }
  // Creates kSearch, registers one 1-slot agent and starts the trial it is given; returns that
  // trial's allocation ("" on failure, with the test failed).
  std::string StartOneOfThree(int64_t* experiment_id) {
    *experiment_id = Create(kSearch);
    RegisterAgent("a1", 1);
    json commands = Commands("a1");
    EXPECT_EQ(commands.size(), 1u) << commands.dump();
    if (commands.size() != 1) return "";
    std::string alloc = commands[0]["allocationId"];
    EXPECT_TRUE(Event("a1", "started", alloc).ok());
    return alloc;
  }
  // Starts one of kSearch's three trials, then runs `act` on the experiment (a pause or a kill).
  // Checks that `act` succeeded and that only the started trial's allocation is left; returns
  // that allocation and the decisions `act` stored.
  struct Acted {
    std::string alloc;
    std::vector<store::DecisionWrites> decisions;
  };
  Acted ActOnOneOfThree(const std::function<Status(int64_t)>& act) {
    Acted out;
    int64_t id = 0;
    out.alloc = StartOneOfThree(&id);
    EXPECT_FALSE(out.alloc.empty());
    size_t before = store->Decisions().size();
    EXPECT_TRUE(act(id).ok());
    std::vector<store::DecisionWrites> all = store->Decisions();
    if (all.size() > before) out.decisions.assign(all.begin() + before, all.end());
    std::vector<AllocationSummaryView> left = allocations->ListAllocations();
    EXPECT_EQ(left.size(), 1u) << "the queued allocations are gone";
    if (!left.empty()) {
      EXPECT_EQ(left.front().allocation_id, out.alloc);
    }
    return out;
  }

  FakeRuntimeStore* store;
  MasterConfig config = TestConfig();
  FakeClock clock;
  Waiters waiters;
  AgentService agents{&clock, &waiters, 60};
  SearcherJournalService journal{store};
  RuntimeLoop loop{std::chrono::hours(1), &journal};
  RuntimeView view;
  TrialLogSink logs{store, &waiters, &clock};
  AuthService auth{store, &clock};
  TaskService tasks{store, &clock, &auth, &agents, {&config.pools, "", "", ""}};
  AgentAdminService agent_admin{store};
  CheckpointService checkpoints{store, &clock, "python3", ""};
  UnmanagedService unmanaged{store, &clock, &config, {.check_interval_ms = 0}};
  std::unique_ptr<AllocationService> allocations;
  std::unique_ptr<ExperimentService> experiments;
};

// The decisions that touched `trial_id`'s allocation rows, in order.
std::vector<store::DecisionWrites> AllocationDecisions(FakeRuntimeStore& store,
                                                       const std::string& allocation_id) {
  std::vector<store::DecisionWrites> out;
  for (const store::DecisionWrites& d : store.Decisions()) {
    bool touched = false;
    for (const store::AllocationRow& a : d.allocations) touched |= a.allocation_id == allocation_id;
    if (touched) out.push_back(d);
  }
  return out;
}

bool HasLog(const store::DecisionWrites& d, const std::string& text) {
  for (const store::TaskLogRow& r : d.logs) {
    if (r.log.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(RuntimeServicesTest, ANewSearchIsStoredAsOneDecision) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  int64_t id = rt.Create(kSearch);
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  ASSERT_EQ(decisions.size(), 1u) << "activation and trials: one transaction";
  const store::DecisionWrites& d = decisions.front();
  ASSERT_TRUE(d.experiment_state.has_value());
  EXPECT_EQ(d.experiment_state->state, "ACTIVE");
  ASSERT_EQ(d.new_trials.size(), 3u);
  for (const store::TrialRow& t : d.new_trials)
    EXPECT_EQ(t.run_id, 1) << "queued for its first run";
  EXPECT_TRUE(d.allocations.empty()) << "a pending allocation has no row until it is placed";
  // Published for readers: queued, nothing placed yet.
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_QUEUED");
  auto trial = rt.Trial(1);
  ASSERT_TRUE(trial.has_value());
  EXPECT_EQ(trial->run_id, 1);
  EXPECT_EQ(trial->activity, core::AllocationState::kPending);
  // No agent: a pass was asked for, and finds nothing to place.
  EXPECT_TRUE(rt.loop.RunRequestedPass());
  EXPECT_EQ(rt.view.FindTrial(1)->activity, core::AllocationState::kPending);
}

TEST(RuntimeServicesTest, ARegisteredAgentGetsStartCommandsEachStoredWithItsLogLine) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  rt.Create(kSearch);
  rt.RegisterAgent("a1", 2);  // its registration runs a pass: two of three trials fit
  json commands = rt.Commands("a1");
  ASSERT_EQ(commands.size(), 2u) << commands.dump();
  for (const json& c : commands) {
    EXPECT_EQ(c["type"], "start");
    const json& env = c["env"];
    EXPECT_EQ(env["DET_TASK_TYPE"], "TRIAL");
    EXPECT_FALSE(env["DET_SESSION_TOKEN"].get<std::string>().empty());
    EXPECT_TRUE(env.contains("DET_SEARCHER_OP")) << "the first operation travels with the start";
    std::vector<store::DecisionWrites> writes =
        AllocationDecisions(store, c["allocationId"].get<std::string>());
    ASSERT_EQ(writes.size(), 1u);  // its first row: assigned
    EXPECT_EQ(writes[0].allocations.front().state, "ASSIGNED");
    EXPECT_EQ(writes[0].allocations.front().token.size(), 64u) << "the digest of its new token";
    EXPECT_TRUE(HasLog(writes[0], "was assigned to agent a1"))
        << "the assignment and its log line are one transaction";
  }
  EXPECT_EQ(rt.view.PresentedExperimentState(1).value_or(""), "STATE_STARTING");
}

// A trial's process that was told "no operation for now" leaves to free its slot: its exit 0
// leaves the trial waiting for a promotion. The same question asked by a user (who may report
// for the trial) must not change what the process's exit means: the exit then completes it.
TEST(RuntimeServicesTest, OnlyTheTrialsOwnAllocationMarksItsRunToldNone) {
  constexpr char kAsha[] =
      "name: asha\n"
      "entrypoint: python3 train.py\n"
      "searcher: {name: adaptive_asha, metric: loss, max_trials: 2, max_concurrent_trials: 2,\n"
      "           max_rungs: 2, divisor: 2, mode: aggressive, max_length: {batches: 10}}\n"
      "hyperparameters: {lr: {type: double, minval: 0.001, maxval: 0.1}}\n"
      "max_restarts: 0\n";
  for (bool own : {true, false}) {
    FakeRuntimeStore store;
    Runtime rt(&store);
    rt.Create(kAsha);
    rt.RegisterAgent("a1", 2);
    json commands = rt.Commands("a1");
    ASSERT_EQ(commands.size(), 2u) << commands.dump();
    std::string alloc = commands[0]["allocationId"];
    int64_t trial_id = std::stoll(commands[0]["env"]["DET_TRIAL_ID"].get<std::string>());
    ASSERT_TRUE(rt.Event("a1", "started", alloc).ok());
    uint64_t length = std::stoull(
        json::parse(commands[0]["env"]["DET_SEARCHER_OP"].get<std::string>())["length"]
            .get<std::string>());
    // Reported by a user: it marks nothing either way.
    std::promise<Status> completed;
    rt.experiments->CompleteSearcherOperation(
        trial_id, length, 0.5, [&](Status st) { completed.set_value(st); }, std::string());
    ASSERT_TRUE(completed.get_future().get().ok());
    std::promise<Result<SearcherOpView>> answer;
    rt.experiments->GetSearcherOperation(
        trial_id, 0, [&](Result<SearcherOpView> r) { answer.set_value(std::move(r)); },
        own ? alloc : std::string());
    Result<SearcherOpView> op = answer.get_future().get();
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    ASSERT_FALSE(op->length.has_value()) << "the first of two waits at the lowest rung";
    ASSERT_TRUE(rt.Event("a1", "exited", alloc, 0).ok());
    ASSERT_TRUE(rt.Trial(trial_id).has_value());
    EXPECT_EQ(rt.Trial(trial_id)->state,
              own ? core::RunState::kActive : core::RunState::kCompleted)
        << (own ? "told none by its own allocation: it waits for a promotion"
                : "asked by a user: the process's exit 0 completes the trial");
  }
}

TEST(RuntimeServicesTest, AnExitIsOneDecisionWithTheTrialsFateAndFreesTheSlot) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  rt.Create(kSearch);
  rt.RegisterAgent("a1", 1);
  json commands = rt.Commands("a1");
  ASSERT_EQ(commands.size(), 1u);
  std::string alloc = commands[0]["allocationId"];
  int64_t trial_id = std::stoll(commands[0]["env"]["DET_TRIAL_ID"].get<std::string>());
  ASSERT_TRUE(rt.Event("a1", "started", alloc).ok());
  EXPECT_EQ(rt.Trial(trial_id)->activity, core::AllocationState::kRunning);
  EXPECT_EQ(rt.view.PresentedExperimentState(1).value_or(""), "STATE_RUNNING");
  ASSERT_TRUE(rt.experiments->CompleteSearcherOperation(trial_id, 10, 0.25).ok());
  size_t before = store.Decisions().size();
  ASSERT_TRUE(rt.Event("a1", "exited", alloc, 0).ok());

  std::vector<store::DecisionWrites> ended = AllocationDecisions(store, alloc);
  const store::DecisionWrites& last = ended.back();
  EXPECT_EQ(last.allocations.front().state, "TERMINATED");
  ASSERT_EQ(last.trials.size(), 1u) << "the trial's end is in the same transaction";
  EXPECT_EQ(last.trials.front().trial_id, trial_id);
  EXPECT_EQ(last.trials.front().state.value_or(""), "COMPLETED");
  EXPECT_TRUE(HasLog(last, "exited with code 0"));
  EXPECT_FALSE(rt.Trial(trial_id)->activity.has_value());
  // The same request's pass gave the free slot to the next trial.
  EXPECT_GT(store.Decisions().size(), before + 1);
  json next = rt.Commands("a1");
  bool another = false;
  for (const json& c : next)
    another = another || (c["type"] == "start" && c["allocationId"] != alloc);
  EXPECT_TRUE(another) << next.dump();
}

TEST(RuntimeServicesTest, PauseAsksRunningTrialsToStopAndStoresEachStepOnce) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  Runtime::Acted acted =
      rt.ActOnOneOfThree([&](int64_t id) { return rt.experiments->PauseExperiment(id); });
  const std::string& alloc = acted.alloc;
  // The two that never started end at once; never placed, they have no rows to write.
  ASSERT_EQ(acted.decisions.size(), 1u);
  ASSERT_TRUE(acted.decisions[0].experiment_state.has_value());
  EXPECT_EQ(acted.decisions[0].experiment_state->state, "PAUSED");
  EXPECT_EQ(acted.decisions[0].trials.size(), 3u) << "the experiment and its trials together";
  // The running one is asked to checkpoint and exit (its preemption long poll answers now).
  std::promise<Result<bool>> preempt;
  rt.allocations->WaitPreemption(alloc, 0, [&](Result<bool> r) { preempt.set_value(r); });
  Result<bool> stop = preempt.get_future().get();
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(*stop);
  // Pending ones never started: they ended at once.
  for (const json& c : rt.Commands("a1")) EXPECT_NE(c["type"], "kill");
}

// A pause of a search whose trials are all queued is one decision; their allocations go in one
// pass with nothing of their own stored, and the searcher's journal gets no record per trial.
TEST(RuntimeServicesTest, APauseEndsEveryQueuedAllocationWithItsOwnDecisionAlone) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  int64_t id = rt.Create(
      "name: many\n"
      "entrypoint: python3 train.py\n"
      "searcher: {name: random, metric: loss, max_trials: 200, max_concurrent_trials: 200,\n"
      "           max_length: {batches: 10}}\n"
      "hyperparameters: {lr: {type: double, minval: 0.001, maxval: 0.1}}\n");
  ASSERT_EQ(rt.allocations->ListAllocations().size(), 200u);
  size_t decisions_before = store.Decisions().size();
  size_t records_before = store.ListSearcherEvents(id)->size();
  ASSERT_TRUE(rt.experiments->PauseExperiment(id).ok());
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  ASSERT_EQ(decisions.size(), decisions_before + 1);
  EXPECT_EQ(decisions.back().trials.size(), 200u);
  EXPECT_TRUE(decisions.back().allocations.empty()) << "never placed: no rows to end";
  EXPECT_LE(store.ListSearcherEvents(id)->size(), records_before + 1);
  EXPECT_TRUE(rt.allocations->ListAllocations().empty());
  // Activated again, each trial gets a new run, queued once: the experiment's state and one
  // write per trial (its return to ACTIVE and its new run together) in one decision.
  size_t paused_decisions = store.Decisions().size();
  // A refused write changes nothing: still paused, nothing queued, no run taken.
  store.FailNextDecision();
  EXPECT_FALSE(rt.experiments->ActivateExperiment(id).ok());
  EXPECT_TRUE(rt.allocations->ListAllocations().empty());
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_PAUSED");
  ASSERT_EQ(store.Decisions().size(), paused_decisions);
  ASSERT_TRUE(rt.experiments->ActivateExperiment(id).ok());
  EXPECT_EQ(rt.allocations->ListAllocations().size(), 200u);
  decisions = store.Decisions();
  ASSERT_EQ(decisions.size(), paused_decisions + 1) << "one transaction";
  const store::DecisionWrites& activated = decisions.back();
  ASSERT_TRUE(activated.experiment_state.has_value());
  EXPECT_EQ(activated.experiment_state->state, "ACTIVE");
  ASSERT_EQ(activated.trials.size(), 200u) << "one write per trial";
  std::set<int64_t> written;
  for (const store::TrialRunWrite& t : activated.trials) {
    written.insert(t.trial_id);
    EXPECT_EQ(t.state.value_or(""), "ACTIVE");
    EXPECT_EQ(t.run_id, 2) << "the new run";
    EXPECT_TRUE(t.run_queued_at.has_value());
  }
  EXPECT_EQ(written.size(), 200u);
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_QUEUED");
}

// Trials still queued end in the kill's own transaction, not in a decision each (a search of
// 20,000 queued trials was 20,000 transactions on the loop); the running one is killed.
TEST(RuntimeServicesTest, AKillEndsQueuedTrialsInItsOwnTransaction) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  Runtime::Acted acted =
      rt.ActOnOneOfThree([&](int64_t id) { return rt.experiments->KillExperiment(id); });
  const std::string& alloc = acted.alloc;
  ASSERT_EQ(acted.decisions.size(), 1u) << "one transaction";
  ASSERT_TRUE(acted.decisions[0].experiment_state.has_value());
  EXPECT_EQ(acted.decisions[0].experiment_state->state, "STOPPING_KILLED");
  std::map<std::string, int> states;
  for (const store::TrialRunWrite& t : acted.decisions[0].trials) states[t.state.value_or("")]++;
  EXPECT_EQ(states, (std::map<std::string, int>{{"CANCELED", 2}, {"STOPPING_KILLED", 1}}));
  bool killed = false;
  for (const json& c : rt.Commands("a1")) {
    EXPECT_FALSE(c["type"] == "start" && c["allocationId"] != alloc) << "a queued one started";
    killed = killed || (c["type"] == "kill" && c["allocationId"] == alloc);
  }
  EXPECT_TRUE(killed);
}

// GET /api/v1/agents reads which allocation holds each slot from the view the loop publishes:
// it answers while the loop is busy with something else, and follows placements and exits.
TEST(RuntimeServicesTest, TheAgentListNeverWaitsForTheLoopAndFollowsItsSlots) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  int64_t id = 0;
  std::string alloc = rt.StartOneOfThree(&id);
  ASSERT_FALSE(alloc.empty());
  std::promise<void> release = rt.StartHeldLoop();
  auto listed = std::async(std::launch::async, [&] { return rt.allocations->ListAgents(); });
  bool answered = listed.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  release.set_value();
  ASSERT_TRUE(answered) << "the agent list waited for the loop";
  std::vector<AgentView> agents = listed.get();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].slot_allocations, (std::map<int, std::string>{{0, alloc}}));
  ASSERT_EQ(agents[0].slot_resources.count(0), 1u);
  EXPECT_FALSE(agents[0].slot_resources.at(0).empty());
  // The trial exits: its slot is free, and the pass that follows gives it to the next trial.
  ASSERT_TRUE(rt.Event("a1", "exited", alloc).ok());
  std::vector<AgentView> after = rt.allocations->ListAgents();
  ASSERT_EQ(after.size(), 1u);
  ASSERT_EQ(after[0].slot_allocations.size(), 1u);
  EXPECT_NE(after[0].slot_allocations.begin()->second, alloc);
  std::vector<AllocationSummaryView> live = rt.allocations->ListAllocations();
  bool same = false;
  for (const AllocationSummaryView& a : live) {
    if (a.allocation_id == after[0].slot_allocations.begin()->second) same = !a.resources.empty();
  }
  EXPECT_TRUE(same) << "the view names the allocation that holds the slot";
  // Killed, nothing holds a slot once the agent reports the exit.
  ASSERT_TRUE(rt.experiments->KillExperiment(id).ok());
  ASSERT_TRUE(rt.Event("a1", "exited", after[0].slot_allocations.begin()->second, 137).ok());
  std::vector<AgentView> killed = rt.allocations->ListAgents();
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_TRUE(killed[0].slot_allocations.empty());
  EXPECT_TRUE(killed[0].slot_resources.empty());
}

constexpr char kThirtyFive[] =
    "name: many\n"
    "entrypoint: python3 train.py\n"
    "searcher: {name: random, metric: loss, max_trials: 35, max_concurrent_trials: 35,\n"
    "           max_length: {batches: 10}}\n"
    "hyperparameters: {lr: {type: double, minval: 0.001, maxval: 0.1}}\n";

// A large new search is stored in slices, so that another experiment's decision waits for one
// slice's transaction only; the last slice carries the activation.
TEST(RuntimeServicesTest, ANewSearchIsStoredInSlicesTheLastOneActivatingIt) {
  FakeRuntimeStore store;
  Runtime rt(&store, /*trial_slice=*/10);
  int64_t id = rt.Create(kThirtyFive);
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  ASSERT_EQ(decisions.size(), 4u);
  std::vector<size_t> sizes;
  for (const store::DecisionWrites& d : decisions) sizes.push_back(d.new_trials.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 10, 10, 5}));
  for (size_t i = 0; i + 1 < decisions.size(); ++i) {
    EXPECT_FALSE(decisions[i].experiment_state.has_value()) << "slice " << i;
  }
  ASSERT_TRUE(decisions.back().experiment_state.has_value());
  EXPECT_EQ(decisions.back().experiment_state->state, "ACTIVE");
  EXPECT_EQ(rt.allocations->ListAllocations().size(), 35u);
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_QUEUED");
}

// Slices stored before a refused one stay, as after a crash between two: the experiment is
// PAUSED and not yet initialized, with those trials, and its activation (on the same master, or
// after a restart) replays their creation and stores only the others: 35 trials, none twice.
TEST(RuntimeServicesTest, ASearchStoppedBetweenSlicesKeepsThemAndActivatesOnce) {
  for (bool restart : {false, true}) {
    SCOPED_TRACE(restart ? "after a restart" : "on the same master");
    FakeRuntimeStore store;
    auto rt = std::make_unique<Runtime>(&store, /*trial_slice=*/10);
    store.FailNextDecision(/*after=*/2);
    CreateExperimentRequest req;
    req.config_yaml = kThirtyFive;
    Principal who;
    who.user_id = 1;
    EXPECT_FALSE(rt->experiments->CreateExperiment(req, who).ok());
    ASSERT_EQ(store.Decisions().size(), 2u);
    std::vector<store::ExperimentRow> rows = *store.ListNonTerminalExperiments();
    ASSERT_EQ(rows.size(), 1u);
    int64_t id = rows[0].id;
    EXPECT_EQ(rows[0].state, "PAUSED");
    ASSERT_EQ(store.ListTrials(id)->size(), 20u);
    if (restart) {
      rt = std::make_unique<Runtime>(&store, /*trial_slice=*/10);
      ASSERT_TRUE(rt->Restore().ok());
    }
    EXPECT_EQ(rt->view.PresentedExperimentState(id).value_or(""), "STATE_PAUSED");
    EXPECT_TRUE(rt->allocations->ListAllocations().empty());
    for (int64_t trial = 1; trial <= 20; ++trial) {
      ASSERT_TRUE(rt->Trial(trial).has_value()) << trial;
      EXPECT_EQ(rt->Trial(trial)->experiment_id, id);
    }
    Status st = rt->experiments->ActivateExperiment(id);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<store::TrialRow> trials = *store.ListTrials(id);
    ASSERT_EQ(trials.size(), 35u);
    std::set<std::string> requests;
    for (const store::TrialRow& t : trials) requests.insert(t.request_id);
    EXPECT_EQ(requests.size(), 35u) << "no trial created twice";
    EXPECT_EQ(rt->allocations->ListAllocations().size(), 35u) << "every trial queued";
    EXPECT_EQ(rt->view.PresentedExperimentState(id).value_or(""), "STATE_QUEUED");
  }
}

// A new search is published on the loop in slices, so a task posted after its creation runs
// once the first slice is published, not after the whole search; a decision about the search
// itself publishes the rest first and so sees every trial; the slice left queued then finds
// nothing to do.
TEST(RuntimeServicesTest, ANewSearchIsPublishedInSlicesAndADecisionAboutItSeesEveryTrial) {
  FakeRuntimeStore store;
  Runtime rt(&store, /*trial_slice=*/10);
  rt.Create(kSearch);  // no loop thread yet: published before Create returns
  ASSERT_EQ(rt.allocations->ListAllocations().size(), 3u);
  std::promise<void> release = rt.StartHeldLoop();
  int64_t big = rt.Create(kThirtyFive);
  ASSERT_NE(big, 0);
  std::future<Result<size_t>> queued_then = rt.QueuedWhenRun();
  std::promise<Status> paused;
  rt.experiments->PauseExperiment(big, [&](Status st) { paused.set_value(std::move(st)); });
  size_t decisions_before = store.Decisions().size();
  release.set_value();
  Result<size_t> queued = Runtime::Await(std::move(queued_then));
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  EXPECT_EQ(*queued, 3u + 10u) << "the task ran after the first slice, before the others";
  Status st = Runtime::Await(paused.get_future());
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_GT(store.Decisions().size(), decisions_before);
  EXPECT_EQ(store.Decisions()[decisions_before].trials.size(), 10u) << "the pause's first slice";
  // A second pause is a decision about the search too: the first one's slices end before it.
  ASSERT_TRUE(rt.experiments->PauseExperiment(big).ok());
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  std::set<int64_t> paused_trials;
  for (size_t i = decisions_before; i < decisions.size(); ++i) {
    for (const store::TrialRunWrite& t : decisions[i].trials) {
      if (t.state.value_or("") == "PAUSED") paused_trials.insert(t.trial_id);
    }
  }
  EXPECT_EQ(paused_trials.size(), 35u) << "the pause saw every trial of the search";
  // The next slice, still queued when the pause published the rest, adds nothing.
  EXPECT_EQ(rt.loop.Read<size_t>([&] { return rt.allocations->ListAllocations().size(); }), 3u);
  for (int64_t trial = 4; trial < 4 + 35; ++trial) {
    std::optional<RuntimeView::Trial> t = rt.Trial(trial);
    ASSERT_TRUE(t.has_value()) << trial;
    EXPECT_EQ(t->experiment_id, big);
    EXPECT_EQ(t->state, core::RunState::kPaused) << trial;
  }
}

// The trial ids each decision since `from` moved to `state`, one set per decision.
std::vector<std::set<int64_t>> MovedPerDecision(FakeRuntimeStore& store, size_t from,
                                                const std::string& state) {
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  std::vector<std::set<int64_t>> out;
  for (size_t i = from; i < decisions.size(); ++i) {
    std::set<int64_t> moved;
    for (const store::TrialRunWrite& t : decisions[i].trials) {
      if (t.state.value_or("") == state) moved.insert(t.trial_id);
    }
    out.push_back(std::move(moved));
  }
  return out;
}

// A kill of a large search stores its state with the running trial and a first slice of the
// queued ones; the others end in slices of their own, each one transaction. The running one is
// killed, no queued one is left, and the process's exit ends the experiment.
TEST(RuntimeServicesTest, AKillOfALargeSearchEndsItsQueuedTrialsInSlices) {
  FakeRuntimeStore store;
  Runtime rt(&store, /*trial_slice=*/10);
  int64_t id = rt.Create(kThirtyFive);
  rt.RegisterAgent("a1", 1);
  json started = rt.Commands("a1");
  ASSERT_EQ(started.size(), 1u);
  std::string alloc = started[0]["allocationId"];
  ASSERT_TRUE(rt.Event("a1", "started", alloc).ok());
  size_t before = store.Decisions().size();
  ASSERT_TRUE(rt.experiments->KillExperiment(id).ok());
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  ASSERT_EQ(decisions.size(), before + 4);
  ASSERT_TRUE(decisions[before].experiment_state.has_value());
  EXPECT_EQ(decisions[before].experiment_state->state, "STOPPING_KILLED");
  for (size_t i = before + 1; i < decisions.size(); ++i) {
    EXPECT_FALSE(decisions[i].experiment_state.has_value()) << "slice " << i - before;
  }
  std::vector<std::set<int64_t>> canceled = MovedPerDecision(store, before, "CANCELED");
  std::vector<size_t> sizes;
  std::set<int64_t> all;
  for (const auto& ids : canceled) {
    sizes.push_back(ids.size());
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 10, 10, 4}));
  EXPECT_EQ(all.size(), 34u) << "every queued trial once";
  EXPECT_EQ(MovedPerDecision(store, before, "STOPPING_KILLED")[0].size(), 1u) << "the running one";
  std::vector<AllocationSummaryView> left = rt.allocations->ListAllocations();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].allocation_id, alloc);
  bool killed = false;
  for (const json& c : rt.Commands("a1")) {
    killed = killed || (c["type"] == "kill" && c["allocationId"] == alloc);
  }
  EXPECT_TRUE(killed);
  ASSERT_TRUE(rt.Event("a1", "exited", alloc, 137).ok());
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_CANCELED");
}

// Between two slices of a kill other tasks run (a task posted after it sees part of the queue),
// and the search's queued allocations stay unplaced: an agent that registers meanwhile is not
// given one. A later decision about the search ends the rest first.
TEST(RuntimeServicesTest, BetweenTheSlicesOfAKillNoQueuedTrialOfTheSearchStarts) {
  FakeRuntimeStore store;
  Runtime rt(&store, /*trial_slice=*/10);
  int64_t id = rt.Create(kThirtyFive);
  ASSERT_EQ(rt.allocations->ListAllocations().size(), 35u);
  std::promise<void> release = rt.StartHeldLoop();
  std::promise<Status> kill;
  rt.experiments->KillExperiment(id, [&](Status st) { kill.set_value(std::move(st)); });
  std::promise<Result<json>> registered;
  json body = {{"slots", {{{"id", 0}, {"type", "cpu"}}}}, {"running", json::array()}};
  rt.allocations->RegisterAgent("a2", body,
                                [&](Result<json> r) { registered.set_value(std::move(r)); });
  std::future<Result<size_t>> queued_then = rt.QueuedWhenRun();
  release.set_value();
  Status st = Runtime::Await(kill.get_future());
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(Runtime::Await(registered.get_future()).ok());
  Result<size_t> queued = Runtime::Await(std::move(queued_then));
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  EXPECT_EQ(*queued, 25u) << "the task ran after the first slice, before the others";
  // Settles the rest (a decision about the search), then nothing is queued or started.
  ASSERT_TRUE(rt.experiments->KillExperiment(id).ok());
  EXPECT_EQ(rt.loop.Read<size_t>([&] { return rt.allocations->ListAllocations().size(); }), 0u);
  for (const json& c : rt.Commands("a2")) EXPECT_NE(c["type"], "start") << c.dump();
  for (int64_t trial = 1; trial <= 35; ++trial) {
    ASSERT_TRUE(rt.Trial(trial).has_value()) << trial;
    EXPECT_EQ(rt.Trial(trial)->state, core::RunState::kCanceled) << trial;
  }
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_CANCELED");
}

// Pauses, kills or activates experiment `id`.
Status Act(Runtime& rt, int64_t id, const std::string& action) {
  if (action == "pause") return rt.experiments->PauseExperiment(id);
  if (action == "kill") return rt.experiments->KillExperiment(id);
  return rt.experiments->ActivateExperiment(id);
}

// After a pause, kill or activation of the 35-trial search (`action`) that was cut short and
// then finished: every trial moved once since decision `before`, none left queued or queued
// twice; a paused search then comes back whole, each trial with one new run.
void ExpectEveryTrialMovedOnce(Runtime& rt, FakeRuntimeStore& store, int64_t id, size_t before,
                               const std::string& action) {
  const std::string moved_to =
      action == "kill" ? "CANCELED" : (action == "pause" ? "PAUSED" : "ACTIVE");
  std::vector<store::TrialRow> rows = *store.ListTrials(id);
  ASSERT_EQ(rows.size(), 35u);
  for (const store::TrialRow& t : rows) EXPECT_EQ(t.state, moved_to) << t.id;
  std::set<int64_t> once;
  size_t writes = 0;
  for (const auto& ids : MovedPerDecision(store, before, moved_to)) {
    writes += ids.size();
    once.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(writes, 35u) << "each trial moved once";
  EXPECT_EQ(once.size(), 35u);
  if (action == "kill") {
    EXPECT_TRUE(rt.allocations->ListAllocations().empty());
    EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_CANCELED");
    return;
  }
  if (action == "pause") {
    EXPECT_TRUE(rt.allocations->ListAllocations().empty());
    EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_PAUSED");
    ASSERT_TRUE(rt.experiments->ActivateExperiment(id).ok());
  }
  EXPECT_EQ(rt.allocations->ListAllocations().size(), 35u) << "every trial queued once";
  rows = *store.ListTrials(id);
  for (const store::TrialRow& t : rows) {
    EXPECT_EQ(t.state, "ACTIVE");
    EXPECT_EQ(t.run_id, 2) << "one new run";
  }
}

// A pause, kill or activation whose later slice is refused (as a crash between two slices
// would leave it) has stored the experiment's new state; the next decision about the search,
// or a restart, moves the trials left behind, each once. A paused search then comes back whole.
TEST(RuntimeServicesTest, APauseKillOrActivationCutShortBetweenSlicesIsFinishedLater) {
  for (const std::string action : {"pause", "kill", "activate"}) {
    for (bool restart : {false, true}) {
      SCOPED_TRACE(action + (restart ? ", after a restart" : ", on the same master"));
      FakeRuntimeStore store;
      auto rt = std::make_unique<Runtime>(&store, /*trial_slice=*/10);
      int64_t id = rt->Create(kThirtyFive);
      auto act = [&]() { return Act(*rt, id, action); };
      if (action == "activate") {
        ASSERT_TRUE(rt->experiments->PauseExperiment(id).ok());
      }
      size_t before = store.Decisions().size();
      store.FailNextDecision(/*after=*/1);
      Status st = act();
      ASSERT_TRUE(st.ok()) << "answered with its first slice: " << st.ToString();
      ASSERT_EQ(store.Decisions().size(), before + 1);
      const std::string moved_to =
          action == "kill" ? "CANCELED" : (action == "pause" ? "PAUSED" : "ACTIVE");
      std::vector<store::TrialRow> rows = *store.ListTrials(id);
      size_t moved = 0;
      for (const store::TrialRow& t : rows) moved += t.state == moved_to;
      EXPECT_EQ(moved, 10u);
      if (restart) {
        rt = std::make_unique<Runtime>(&store, /*trial_slice=*/10);
        ASSERT_TRUE(rt->Restore().ok());
      } else {
        // Any decision about the search (here the same request again) moves the rest first.
        ASSERT_TRUE(act().ok());
      }
      ExpectEveryTrialMovedOnce(*rt, store, id, before, action);
    }
  }
}

// A pause, kill or activation whose first slice is refused changes nothing stored, and the
// experiment's decisions are rebuilt from the store, its searcher included (a search rebuilt
// as never started would create its trials again): the same request later (on the same master
// or after a restart) moves every trial once. A paused search then comes back whole.
TEST(RuntimeServicesTest, APauseKillOrActivationWhoseFirstSliceFailsChangesNothing) {
  for (const std::string action : {"pause", "kill", "activate"}) {
    for (bool restart : {false, true}) {
      SCOPED_TRACE(action + (restart ? ", after a restart" : ", on the same master"));
      FakeRuntimeStore store;
      auto rt = std::make_unique<Runtime>(&store, /*trial_slice=*/10);
      int64_t id = rt->Create(kThirtyFive);
      auto act = [&]() { return Act(*rt, id, action); };
      if (action == "activate") {
        ASSERT_TRUE(rt->experiments->PauseExperiment(id).ok());
      }
      const std::string before_state = action == "activate" ? "PAUSED" : "ACTIVE";
      size_t before = store.Decisions().size();
      store.FailNextDecision();
      EXPECT_FALSE(act().ok());
      ASSERT_EQ(store.Decisions().size(), before);
      std::vector<store::TrialRow> unchanged = *store.ListTrials(id);
      for (const store::TrialRow& t : unchanged) EXPECT_EQ(t.state, before_state);
      EXPECT_EQ(rt->view.PresentedExperimentState(id).value_or(""),
                action == "activate" ? "STATE_PAUSED" : "STATE_QUEUED");
      if (restart) {
        rt = std::make_unique<Runtime>(&store, /*trial_slice=*/10);
        ASSERT_TRUE(rt->Restore().ok());
      }
      before = store.Decisions().size();
      ASSERT_TRUE(act().ok());
      ExpectEveryTrialMovedOnce(*rt, store, id, before, action);
    }
  }
}

// An activation of a large paused search returns its first slice of trials with its state and
// the others in slices of their own; a task posted after it runs between two slices.
TEST(RuntimeServicesTest, AnActivationOfALargeSearchReturnsItsTrialsInSlices) {
  FakeRuntimeStore store;
  Runtime rt(&store, /*trial_slice=*/10);
  int64_t id = rt.Create(kThirtyFive);
  ASSERT_TRUE(rt.experiments->PauseExperiment(id).ok());
  size_t before = store.Decisions().size();
  std::promise<void> release = rt.StartHeldLoop();
  std::promise<Status> activated;
  rt.experiments->ActivateExperiment(id, [&](Status st) { activated.set_value(std::move(st)); });
  std::future<Result<size_t>> queued_then = rt.QueuedWhenRun();
  release.set_value();
  Status st = Runtime::Await(activated.get_future());
  ASSERT_TRUE(st.ok()) << st.ToString();
  Result<size_t> queued = Runtime::Await(std::move(queued_then));
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  EXPECT_EQ(*queued, 10u) << "the task ran after the first slice, before the others";
  // A decision about the search (a pause) returns the rest first, then pauses all 35 (in
  // slices too: the second pause settles them).
  ASSERT_TRUE(rt.experiments->PauseExperiment(id).ok());
  ASSERT_TRUE(rt.experiments->PauseExperiment(id).ok());
  std::vector<store::DecisionWrites> decisions = store.Decisions();
  ASSERT_TRUE(decisions[before].experiment_state.has_value());
  EXPECT_EQ(decisions[before].experiment_state->state, "ACTIVE");
  // 10 with the state, then slices of 10 until the pause returned the rest at once.
  std::vector<std::set<int64_t>> returned = MovedPerDecision(store, before, "ACTIVE");
  EXPECT_EQ(returned[0].size(), 10u);
  std::set<int64_t> all;
  size_t writes = 0;
  for (const auto& ids : returned) {
    writes += ids.size();
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(writes, 35u);
  EXPECT_EQ(all.size(), 35u);
  std::set<int64_t> paused;
  for (const auto& ids : MovedPerDecision(store, before, "PAUSED")) {
    paused.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(paused.size(), 35u);
  EXPECT_EQ(rt.loop.Read<size_t>([&] { return rt.allocations->ListAllocations().size(); }), 0u);
}

// A decision about a trial that is stored but not yet published (its search is published in
// slices) publishes the rest of its search first, then finds it: `det trial kill` of the last
// trial of a new search kills it rather than answering as if it had ended.
TEST(RuntimeServicesTest, ADecisionAboutAnUnpublishedTrialPublishesItsSearchFirst) {
  FakeRuntimeStore store;
  Runtime rt(&store, /*trial_slice=*/10);
  rt.Create(kSearch);  // trials 1-3, published before Create returns (no loop thread yet)
  std::promise<void> release = rt.StartHeldLoop();
  int64_t big = rt.Create(kThirtyFive);            // trials 4-38, published in slices of 10
  ASSERT_NE(big, 0);
  const int64_t last = 38;
  ASSERT_EQ(store.GetTrial(last)->experiment_id, big);
  std::promise<Status> killed;
  rt.experiments->KillTrial(last, [&](Status st) { killed.set_value(std::move(st)); });
  release.set_value();
  Status st = Runtime::Await(killed.get_future());
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(rt.Trial(last).has_value());
  EXPECT_NE(rt.Trial(last)->state, core::RunState::kActive) << "the kill reached it";
  EXPECT_EQ(rt.loop.Read<size_t>([&] { return rt.allocations->ListAllocations().size(); }),
            3u + 34u)
      << "every other trial of the search published and queued";
}

TEST(RuntimeServicesTest, ARefusedWriteLeavesTheRuntimeAsItWas) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  int64_t id = rt.Create(kSearch);
  size_t before = store.Decisions().size();
  store.FailNextDecision();
  Status st = rt.experiments->PauseExperiment(id);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(store.Decisions().size(), before);
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_QUEUED");
  // Nothing half-done: the same request succeeds once the store takes it.
  ASSERT_TRUE(rt.experiments->PauseExperiment(id).ok());
  EXPECT_EQ(rt.view.PresentedExperimentState(id).value_or(""), "STATE_PAUSED");
}

TEST(RuntimeServicesTest, AReportFromAnEarlierRunIsRefusedFromTheViewAlone) {
  FakeRuntimeStore store;
  Runtime rt(&store);
  rt.Create(kSearch);
  std::promise<Status> answer;
  Principal user;
  user.user_id = 1;
  // MetricsService is absent: a refused report never reaches it.
  rt.experiments->ReportMetrics(user, 1, /*run_id=*/7, 5, "training", json::object(),
                                [&](Status st) { answer.set_value(st); });
  Status st = answer.get_future().get();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("current run is 1"), std::string::npos) << st.ToString();
}

TEST(RuntimeServicesTest, RestartedServicesReadoptWhatTheAgentStillRunsAndRequeueTheRest) {
  FakeRuntimeStore store;
  std::string kept, lost;
  {
    Runtime first(&store);
    first.Create(kSearch);
    first.RegisterAgent("a1", 2);
    json commands = first.Commands("a1");
    ASSERT_EQ(commands.size(), 2u);
    kept = commands[0]["allocationId"];
    lost = commands[1]["allocationId"];
    ASSERT_TRUE(first.Event("a1", "started", kept).ok());
    ASSERT_TRUE(first.Event("a1", "started", lost).ok());
  }  // the master stops; its agent keeps one process

  Runtime second(&store);
  ASSERT_TRUE(second.Restore().ok());
  second.RegisterAgent("a1", 2, json::array({kept}));
  auto kept_trial = store.GetAllocation(kept);
  ASSERT_TRUE(kept_trial.ok());
  EXPECT_EQ(second.Trial(kept_trial->trial_id)->activity, core::AllocationState::kRunning)
      << "re-adopted";
  auto lost_row = store.GetAllocation(lost);
  ASSERT_TRUE(lost_row.ok());
  EXPECT_EQ(lost_row->state, "TERMINATED");
  EXPECT_EQ(lost_row->exit_reason, "agent a1 lost the process");
  // Lost to the infrastructure: its trial runs again, without a restart charged.
  auto lost_trial = store.GetTrial(lost_row->trial_id);
  ASSERT_TRUE(lost_trial.ok());
  EXPECT_EQ(lost_trial->restarts, 0);
  EXPECT_EQ(lost_trial->run_id, 2);
  EXPECT_EQ(second.Trial(lost_row->trial_id)->run_id, 2);
}

// A kill decided after a restart but before the agent that runs the trial registers again
// reaches the agent when it does (the agent had no command queue to take it before).
TEST(RuntimeServicesTest, AKillWhileTheAgentIsAwayReachesItWhenItRegistersAgain) {
  FakeRuntimeStore store;
  std::string alloc;
  int64_t id = 0;
  {
    Runtime first(&store);
    alloc = first.StartOneOfThree(&id);
    ASSERT_FALSE(alloc.empty());
  }  // the master stops; its agent keeps the process
  Runtime second(&store);
  ASSERT_TRUE(second.Restore().ok());
  ASSERT_TRUE(second.experiments->KillExperiment(id).ok());
  second.RegisterAgent("a1", 1, json::array({alloc}));
  json commands = second.Commands("a1");
  bool killed = false;
  for (const json& c : commands) {
    killed = killed || (c.value("type", "") == "kill" && c.value("allocationId", "") == alloc);
  }
  EXPECT_TRUE(killed) << commands.dump();
  // The process's exit ends the trial and the experiment.
  ASSERT_TRUE(second.Event("a1", "exited", alloc, 137).ok());
  EXPECT_EQ(second.view.PresentedExperimentState(id).value_or(""), "STATE_CANCELED");
}

}  // namespace
}  // namespace det::master::server
