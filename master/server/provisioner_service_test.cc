#include "master/server/provisioner_service.h"

#include <gtest/gtest.h>

#include <set>

namespace det::master::server {
namespace {

// Agents exist from Launch until the test ends them (`Exit`), as processes would.
class FakeProvider : public Provider {
 public:
  Status Launch(const LaunchSpec& spec) override {
    if (fail_launches) return Unavailable("no capacity");
    launched.push_back(spec);
    alive[spec.agent_id] = {spec.agent_id, spec.pool, spec.launched_at_ms};
    return Status::Ok();
  }
  Status Stop(const std::string& agent_id) override {
    stopped.push_back(agent_id);
    if (exit_on_stop) alive.erase(agent_id);
    return Status::Ok();
  }
  Result<std::vector<Instance>> List() override {
    std::vector<Instance> out;
    for (const auto& [id, inst] : alive) out.push_back(inst);
    return out;
  }
  std::vector<LaunchSpec> launched;
  std::vector<std::string> stopped;
  std::map<std::string, Instance> alive;
  bool exit_on_stop = true;
  bool fail_launches = false;
};

scheduler::ProvisionerConfig LocalConfig(int min, int max) {
  scheduler::ProvisionerConfig c;
  c.type = "local";
  c.min_instances = min;
  c.max_instances = max;
  c.slots_per_agent = 1;
  c.max_idle_agent_period_ms = 3000;
  c.max_agent_starting_period_ms = 60000;
  return c;
}

class ProvisionerServiceTest : public ::testing::Test {
 protected:
  void Make(std::map<std::string, scheduler::ProvisionerConfig> pools,
            std::unique_ptr<FakeProvider> provider = std::make_unique<FakeProvider>()) {
    provider_ = provider.get();
    std::map<std::string, std::unique_ptr<Provider>> providers;
    providers["local"] = std::move(provider);
    service_ =
        std::make_unique<ProvisionerService>(&clock_, std::move(pools), std::move(providers));
  }
  // One tick and the worker's turn, as the Master's loop and the worker thread would.
  std::vector<std::string> Step(const ProvisionerService::TickInput& in) {
    std::vector<std::string> gone = service_->Tick(in);
    service_->RunActions();
    return gone;
  }
  static ProvisionerService::TickInput Waiting(const std::string& pool, int slots, int free = 0) {
    ProvisionerService::TickInput in;
    in.pools[pool] = {slots, slots, free};
    return in;
  }

  FakeClock clock_;
  FakeProvider* provider_ = nullptr;
  std::unique_ptr<ProvisionerService> service_;
};

TEST_F(ProvisionerServiceTest, LaunchesForWaitingSlotsAndCountsStartingAgents) {
  Make({{"grow", LocalConfig(0, 2)}});
  ProvisionerService::TickInput in = Waiting("grow", 3);
  Step(in);
  ASSERT_EQ(provider_->launched.size(), 2u);  // max_instances
  EXPECT_EQ(provider_->launched[0].agent_id, "grow-agent-1");
  EXPECT_EQ(provider_->launched[0].pool, "grow");
  EXPECT_EQ(provider_->launched[0].slots, 1);
  EXPECT_EQ(provider_->launched[1].agent_id, "grow-agent-2");
  EXPECT_EQ(service_->StatusOf("grow").starting, 2);
  EXPECT_EQ(ProvisionerJobDetail(*service_, "grow"), "waiting for 2 agents to start");
  // While they boot, the same demand launches nothing more.
  clock_.Advance(1'000'000);
  Step(in);
  EXPECT_EQ(provider_->launched.size(), 2u);
}

TEST_F(ProvisionerServiceTest, RegisteredAgentsServeThenStopAfterTheIdlePeriod) {
  Make({{"grow", LocalConfig(0, 2)}});
  Step(Waiting("grow", 2));
  ASSERT_EQ(provider_->launched.size(), 2u);
  // Both registered and busy.
  ProvisionerService::TickInput busy;
  busy.agents["grow-agent-1"] = {true, true};
  busy.agents["grow-agent-2"] = {true, true};
  clock_.Advance(2'000'000);
  Step(busy);
  EXPECT_EQ(service_->StatusOf("grow").running, 2);
  EXPECT_EQ(ProvisionerJobDetail(*service_, "grow"), "");
  // Agent 1 finishes: idle from now; not stopped before max_idle_agent_period (3 s).
  ProvisionerService::TickInput one_idle = busy;
  one_idle.agents["grow-agent-1"].busy = false;
  Step(one_idle);
  clock_.Advance(2'999'000);
  Step(one_idle);
  EXPECT_TRUE(provider_->stopped.empty());
  EXPECT_FALSE(service_->Stopping("grow-agent-1"));
  clock_.Advance(1'000);
  ProvisionerService::TickInput keep_alive = one_idle;
  std::vector<std::string> gone = service_->Tick(keep_alive);
  EXPECT_TRUE(gone.empty());
  // Marked stopping at the decision (the scheduler skips it from now), stopped by the worker.
  EXPECT_TRUE(service_->Stopping("grow-agent-1"));
  EXPECT_FALSE(service_->Stopping("grow-agent-2"));
  service_->RunActions();
  EXPECT_EQ(provider_->stopped, std::vector<std::string>{"grow-agent-1"});
  // The provider says it is gone: the next tick reports it once.
  EXPECT_EQ(service_->Tick(keep_alive), std::vector<std::string>{"grow-agent-1"});
  EXPECT_TRUE(service_->Tick(keep_alive).empty());
  EXPECT_EQ(service_->StatusOf("grow").running, 1);
}

TEST_F(ProvisionerServiceTest, BusyAgentsAreNeverStoppedAndIdleTimeResetsWhenBusy) {
  Make({{"grow", LocalConfig(0, 1)}});
  Step(Waiting("grow", 1));
  ProvisionerService::TickInput idle;
  idle.agents["grow-agent-1"] = {true, false};
  ProvisionerService::TickInput busy;
  busy.agents["grow-agent-1"] = {true, true};
  Step(idle);
  clock_.Advance(2'000'000);
  Step(busy);
  clock_.Advance(10'000'000);
  Step(busy);
  Step(idle);  // idle again from now
  clock_.Advance(2'000'000);
  Step(idle);
  EXPECT_TRUE(provider_->stopped.empty());
  clock_.Advance(1'000'000);
  Step(idle);
  EXPECT_EQ(provider_->stopped, std::vector<std::string>{"grow-agent-1"});
}

TEST_F(ProvisionerServiceTest, FreeSlotsCoverWaitingTasksAndIdsAreReused) {
  Make({{"grow", LocalConfig(0, 3)}});
  Step(Waiting("grow", 1));
  ProvisionerService::TickInput in = Waiting("grow", 1, /*free=*/1);
  in.agents["grow-agent-1"] = {true, false};
  Step(in);
  EXPECT_EQ(provider_->launched.size(), 1u);
  // The agent exits by itself: reported gone; the next agent takes its id again.
  provider_->alive.clear();
  service_->RunActions();
  EXPECT_EQ(service_->Tick({}), std::vector<std::string>{"grow-agent-1"});
  Step(Waiting("grow", 1));
  ASSERT_EQ(provider_->launched.size(), 2u);
  EXPECT_EQ(provider_->launched[1].agent_id, "grow-agent-1");
}

TEST_F(ProvisionerServiceTest, KeepsMinInstancesAndLeavesOtherPoolsAlone) {
  scheduler::ProvisionerConfig aws = LocalConfig(0, 4);
  aws.type = "aws";  // no provider here: the pool stays static
  Make({{"warm", LocalConfig(1, 3)}, {"cloud", aws}});
  EXPECT_FALSE(service_->Provisions("cloud"));
  EXPECT_TRUE(service_->Provisions("warm"));
  EXPECT_FALSE(service_->Provisions("static"));
  ProvisionerService::TickInput in = Waiting("cloud", 4);
  in.pools["static"] = {5, 5, 0};
  Step(in);
  ASSERT_EQ(provider_->launched.size(), 1u);
  EXPECT_EQ(provider_->launched[0].pool, "warm");
  ProvisionerService::TickInput idle;
  idle.agents["warm-agent-1"] = {true, false};
  Step(idle);
  clock_.Advance(60'000'000);
  Step(idle);
  EXPECT_TRUE(provider_->stopped.empty());  // the minimum stays however long it idles
}

TEST_F(ProvisionerServiceTest, AgentThatNeverRegistersIsReplaced) {
  Make({{"grow", LocalConfig(0, 1)}});
  Step(Waiting("grow", 1));
  clock_.Advance(60'000'000);       // max_agent_starting_period
  provider_->exit_on_stop = false;  // it takes a while to end (SIGKILL after the grace)
  Step(Waiting("grow", 1));
  EXPECT_EQ(provider_->stopped, std::vector<std::string>{"grow-agent-1"});
  EXPECT_EQ(service_->StatusOf("grow").stopping, 1);
  // A replacement takes the next id while the old one ends.
  ASSERT_EQ(provider_->launched.size(), 2u);
  EXPECT_EQ(provider_->launched[1].agent_id, "grow-agent-2");
}

TEST_F(ProvisionerServiceTest, ReFindsAgentsAfterARestartAndGivesThemTimeToRegister) {
  auto provider = std::make_unique<FakeProvider>();
  provider->alive["grow-agent-1"] = {"grow-agent-1", "grow", 1};  // launched long ago
  provider->alive["gone-pool-agent-1"] = {"gone-pool-agent-1", "gone-pool", 1};
  Make({{"grow", LocalConfig(0, 2)}}, std::move(provider));
  ASSERT_TRUE(service_->Start().ok());
  service_->Stop();  // the worker's turns are taken by hand below
  EXPECT_EQ(service_->StatusOf("grow").starting, 1);
  // An agent of a pool that is no longer provisioned is ended.
  service_->RunActions();
  EXPECT_EQ(provider_->stopped, std::vector<std::string>{"gone-pool-agent-1"});
  // The re-found agent counts as starting (not stopped as late) while it re-registers.
  Step(Waiting("grow", 1));
  EXPECT_EQ(provider_->launched.size(), 0u);
  EXPECT_TRUE(std::find(provider_->stopped.begin(), provider_->stopped.end(), "grow-agent-1") ==
              provider_->stopped.end());
}

TEST_F(ProvisionerServiceTest, AgentIdsKeepOnlyFileSafeCharactersOfThePool) {
  Make({{"team a/b", LocalConfig(0, 1)}});
  Step(Waiting("team a/b", 1));
  ASSERT_EQ(provider_->launched.size(), 1u);
  EXPECT_EQ(provider_->launched[0].agent_id, "team-a-b-agent-1");
  EXPECT_EQ(provider_->launched[0].pool, "team a/b");
}

TEST_F(ProvisionerServiceTest, FailedLaunchBacksOff) {
  auto provider = std::make_unique<FakeProvider>();
  provider->fail_launches = true;
  Make({{"grow", LocalConfig(0, 2)}}, std::move(provider));
  Step(Waiting("grow", 1));
  EXPECT_EQ(service_->StatusOf("grow").starting, 0);  // dropped
  provider_->fail_launches = false;
  clock_.Advance(1'000'000);
  Step(Waiting("grow", 1));
  EXPECT_TRUE(provider_->launched.empty());  // within the back-off
  clock_.Advance(5'000'000);
  Step(Waiting("grow", 1));
  EXPECT_EQ(provider_->launched.size(), 1u);
}

}  // namespace
}  // namespace det::master::server
