// AgentService with a fake clock and a real Waiters registry: registration, the command channel
// (sequence numbers, acknowledgement by polling past them, long polls woken by a push) and loss.
#include "master/server/agent_service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>

namespace det::master::server {
namespace {

StartCommand Start(const std::string& allocation_id) {
  StartCommand c;
  c.allocation_id = allocation_id;
  return c;
}

using nlohmann::json;

constexpr int64_t kTimeoutSeconds = 10;

Status AnyPool(const std::string&, const std::string&) { return Status::Ok(); }

class AgentServiceTest : public ::testing::Test {
 protected:
  AgentService::Registration Register(const std::string& id, json body = json::object()) {
    auto r = agents_.Register(id, body, AnyPool);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : AgentService::Registration{};
  }

  // Starts a poll; the future holds its answer.
  std::future<Result<json>> Poll(const std::string& id, int64_t after, int64_t timeout_ms) {
    auto promise = std::make_shared<std::promise<Result<json>>>();
    auto future = promise->get_future();
    agents_.PollCommands(id, after, timeout_ms,
                         [promise](Result<json> r) { promise->set_value(std::move(r)); });
    return future;
  }

  static json Answer(std::future<Result<json>>& f) {
    // A deadline for the test, not a synchronisation: the answer is expected well before it.
    EXPECT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    Result<json> r = f.get();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : json();
  }

  FakeClock clock_;
  Waiters waiters_;
  AgentService agents_{&clock_, &waiters_, kTimeoutSeconds};
};

TEST_F(AgentServiceTest, RegistrationRecordsTheAgentAndChecksItsPool) {
  Register("a1", {{"resourcePool", "gpu"},
                  {"hostname", "h1"},
                  {"address", "10.0.0.5"},
                  {"slots", json::array({{{"id", 0}}, {{"id", 1}}})}});
  std::optional<AgentService::Agent> a = agents_.Find("a1");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->resource_pool, "gpu");
  EXPECT_EQ(a->address, "10.0.0.5");
  EXPECT_EQ(a->slots.size(), 2u);
  EXPECT_TRUE(a->connected);

  auto refused = agents_.Register("a2", {{"resourcePool", "nope"}},
                                  [](const std::string&, const std::string& pool) {
                                    return InvalidArgument("resourcePool: no pool " + pool);
                                  });
  EXPECT_FALSE(refused.ok());
  EXPECT_FALSE(agents_.Find("a2").has_value()) << "a refused agent is not recorded";
  EXPECT_FALSE(agents_.Register("", json::object(), AnyPool).ok());
  // A wrong-typed field is refused naming it, and nothing is recorded.
  for (const json& bad : {json{{"resourcePool", 1}}, json{{"hostname", json::array()}},
                          json{{"slots", "two"}}, json{{"running", 7}}}) {
    auto r = agents_.Register("a3", bad, AnyPool);
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(bad.begin().key()), std::string::npos)
        << r.status().message();
    EXPECT_FALSE(agents_.Find("a3").has_value()) << bad.dump();
  }
}

TEST_F(AgentServiceTest, RegistrationRecordsContainerRuntimes) {
  Register("a1", {{"containerRuntimes", {"podman"}}});
  EXPECT_EQ(agents_.Find("a1")->container_runtimes, std::vector<std::string>{"podman"});
  // A re-registration replaces them (the agent may have restarted without podman).
  Register("a1", json::object());
  EXPECT_TRUE(agents_.Find("a1")->container_runtimes.empty());
}

TEST_F(AgentServiceTest, CommandsAreNumberedAndKeptUntilPolledPast) {
  Register("a1");
  ASSERT_TRUE(agents_.Push("a1", Start("1.r.1")));
  ASSERT_TRUE(agents_.Push("a1", KillCommand{"1.r.0"}));
  EXPECT_FALSE(agents_.Push("ghost", KillCommand{"x"}));

  auto first = Poll("a1", 0, 1000);
  json got = Answer(first);
  ASSERT_EQ(got["commands"].size(), 2u);
  EXPECT_EQ(got["commands"][0]["seq"], 1);
  EXPECT_EQ(got["commands"][1]["seq"], 2);

  // The answer was lost: polling again from 0 gets both again; acknowledging 1 leaves one.
  auto again = Poll("a1", 1, 1000);
  got = Answer(again);
  ASSERT_EQ(got["commands"].size(), 1u);
  EXPECT_EQ(got["commands"][0]["type"], "kill");

  // A re-registration reports what was acknowledged and which starts are still unacked.
  ASSERT_TRUE(agents_.Push("a1", Start("1.r.2")));
  AgentService::Registration reg = Register("a1", {{"running", json::array({"1.r.1"})}});
  EXPECT_EQ(reg.command_seq, 1);
  EXPECT_EQ(reg.running, std::set<std::string>{"1.r.1"});
  EXPECT_EQ(reg.starting, std::set<std::string>{"1.r.2"});
}

TEST_F(AgentServiceTest, APollWaitsForAPushAndAnswersEmptyAtItsDeadline) {
  Register("a1");
  auto waiting = Poll("a1", 0, 60000);
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "nothing queued: the poll waits";
  ASSERT_TRUE(agents_.Push("a1", KillCommand{"x"}));
  json got = Answer(waiting);
  ASSERT_EQ(got["commands"].size(), 1u);

  auto empty = Poll("a1", 1, 0);
  got = Answer(empty);
  EXPECT_TRUE(got["commands"].empty());

  auto unknown = Poll("ghost", 0, 0);
  ASSERT_EQ(unknown.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(unknown.get().status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(AgentServiceTest, SilentAgentsAreLostAndMustRegisterAgain) {
  Register("a1");
  Register("a2");
  ASSERT_TRUE(agents_.Push("a1", KillCommand{"x"}));
  clock_.Advance((kTimeoutSeconds - 1) * 1000000);
  ASSERT_TRUE(agents_.Touch("a2").ok());
  EXPECT_TRUE(agents_.ExpireLost().empty());
  clock_.Advance(2 * 1000000);
  EXPECT_EQ(agents_.ExpireLost(), std::vector<std::string>{"a1"});
  EXPECT_FALSE(agents_.Find("a1")->connected);
  EXPECT_TRUE(agents_.Find("a2")->connected);

  auto poll = Poll("a1", 0, 1000);
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  Result<json> r = poll.get();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("register again"), std::string::npos);
  EXPECT_EQ(agents_.Touch("ghost").code(), StatusCode::kUnavailable);

  AgentService::Registration reg = Register("a1");
  EXPECT_EQ(reg.command_seq, 1) << "the lost agent's commands were dropped";
  EXPECT_TRUE(agents_.Find("a1")->connected);
}

TEST_F(AgentServiceTest, AnOpenPollKeepsAnIdleAgentInContact) {
  Register("a1");
  auto waiting = Poll("a1", 0, 60000);
  clock_.Advance(kTimeoutSeconds * 3 * 1000000);
  EXPECT_TRUE(agents_.ExpireLost().empty());
  agents_.BeginShutdown();
  ASSERT_TRUE(agents_.Push("a1", KillCommand{"x"}));
  Answer(waiting);
  auto drained = Poll("a1", 1, 60000);
  EXPECT_TRUE(Answer(drained)["commands"].empty()) << "draining: a poll answers at once";
}

TEST_F(AgentServiceTest, ForgottenAgentLeavesTheListsUntilItRegistersAgain) {
  Register("grow-agent-1");
  auto poll = Poll("grow-agent-1", 0, 60000);
  agents_.Forget("grow-agent-1");
  // Its open poll is told to register again; it is no longer listed or found.
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(poll.get().ok());
  EXPECT_TRUE(agents_.List().empty());
  EXPECT_FALSE(agents_.Find("grow-agent-1").has_value());
  clock_.Advance(5'000'000);
  Register("grow-agent-1");
  ASSERT_EQ(agents_.List().size(), 1u);
  EXPECT_TRUE(agents_.List()[0].connected);
  EXPECT_EQ(agents_.List()[0].registered_time, clock_.NowMicros());
}

}  // namespace
}  // namespace det::master::server
