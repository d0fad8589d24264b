#include "master/server/runtime_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace det::master::server {
namespace {

using std::chrono::milliseconds;

// Counts the hooks' calls; waits (with a deadline) until a count is reached.
struct Counter {
  std::mutex mu;
  std::condition_variable cv;
  int passes = 0;
  int ticks = 0;

  void Pass() {
    std::lock_guard<std::mutex> l(mu);
    passes++;
    cv.notify_all();
  }
  void Tick() {
    std::lock_guard<std::mutex> l(mu);
    ticks++;
    cv.notify_all();
  }
  bool WaitFor(int* field, int at_least) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(30), [&] { return *field >= at_least; });
  }
  int Get(int* field) {
    std::lock_guard<std::mutex> l(mu);
    return *field;
  }
};

RuntimeLoop::Hooks HooksOf(Counter* c) {
  return {[c] { c->Pass(); }, [c] { c->Tick(); }};
}

TEST(RuntimeLoopTest, ARequestRunsAPass) {
  Counter c;
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.SetHooks(HooksOf(&c));
  loop.Start();
  loop.RequestPass();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  loop.RequestPass();
  ASSERT_TRUE(c.WaitFor(&c.passes, 2));
  loop.Stop();
  EXPECT_EQ(c.Get(&c.ticks), 0);  // the interval has not passed
}

TEST(RuntimeLoopTest, RequestsBeforeStartShareOnePass) {
  Counter c;
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.SetHooks(HooksOf(&c));
  for (int i = 0; i < 1000; ++i) loop.RequestPass();
  loop.Start();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  // A task after the pass proves the loop went round; still one pass.
  EXPECT_TRUE(loop.Read<bool>([] { return true; }));
  loop.Stop();
  EXPECT_EQ(c.Get(&c.passes), 1);
}

TEST(RuntimeLoopTest, ABatchOfTasksAskingForPassesGetsOnePass) {
  Counter c;
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.SetHooks(HooksOf(&c));
  loop.Start();
  std::mutex gate;
  gate.lock();
  std::promise<void> entered;
  loop.Post([&] {
    entered.set_value();
    std::lock_guard<std::mutex> wait(gate);  // holds the loop until all tasks are queued
  });
  // Queued only once the loop runs the gate, so none of them shares the gate's batch.
  entered.get_future().wait();
  for (int i = 0; i < 500; ++i) loop.Post([&loop] { loop.RequestPass(); });
  gate.unlock();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  EXPECT_TRUE(loop.Read<bool>([] { return true; }));
  loop.Stop();
  EXPECT_EQ(c.Get(&c.passes), 1);
}

TEST(RuntimeLoopTest, TicksWithoutRequests) {
  Counter c;
  RuntimeLoop loop(milliseconds(1), nullptr);
  loop.SetHooks(HooksOf(&c));
  loop.Start();
  ASSERT_TRUE(c.WaitFor(&c.ticks, 3));
  loop.Stop();
  EXPECT_EQ(c.Get(&c.passes), 0);
}

TEST(RuntimeLoopTest, TasksRunInOrderOnOneThread) {
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.Start();
  std::vector<int> seen;
  std::set<std::thread::id> threads;
  for (int i = 0; i < 100; ++i) {
    loop.Post([&, i] {
      seen.push_back(i);
      threads.insert(std::this_thread::get_id());
    });
  }
  EXPECT_TRUE(loop.Read<bool>([&] { return loop.OnLoop(); }));
  loop.Stop();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

TEST(RuntimeLoopTest, WithoutAThreadTasksRunInlineBeforeStartAndAfterStop) {
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  bool ran = false;
  loop.Post([&] { ran = loop.OnLoop(); });
  EXPECT_TRUE(ran);  // before Start: here, now
  EXPECT_FALSE(loop.OnLoop());
  loop.Start();
  loop.Stop();
  ran = false;
  loop.Post([&] { ran = true; });
  EXPECT_TRUE(ran);  // after Stop: here, now
  EXPECT_TRUE(loop.draining());
}

TEST(RuntimeLoopTest, CallsFromTheLoopRunInlineInsteadOfDeadlocking) {
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.Start();
  Status st = loop.DecideAndWait([&]() -> Status {
    int inner = loop.Read<int>([] { return 7; });
    Status nested = loop.DecideAndWait([] { return InvalidArgument("nested"); });
    return inner == 7 && !nested.ok() ? Status::Ok() : Internal("nested calls went wrong");
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  loop.Stop();
}

TEST(RuntimeLoopTest, DecideAnswersWithTheDecisionsResult) {
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.Start();
  Result<int> r = loop.DecideAndWait<int>([]() -> Result<int> { return 42; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  Result<int> bad = loop.DecideAndWait<int>([]() -> Result<int> { return NotFound("none"); });
  EXPECT_FALSE(bad.ok());
  loop.Stop();
}

// The router fuzzer's finding: a decision with a result type that threw (a json type error on
// input the request's checks let through) was answered from a result never made, undefined
// behaviour on the loop thread. Now it is the refusal, and the loop goes on.
TEST(RuntimeLoopTest, ADecisionThatThrowsIsRefusedAndTheLoopGoesOn) {
  RuntimeLoop loop(std::chrono::hours(1), nullptr);
  loop.Start();
  for (int i = 0; i < 100; ++i) {
    Result<std::string> r = loop.DecideAndWait<std::string>([]() -> Result<std::string> {
      nlohmann::json number = 1;
      return number.at("name").get<std::string>();  // throws type_error
    });
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("malformed request"), std::string::npos)
        << r.status().message();
  }
  Result<std::string> after =
      loop.DecideAndWait<std::string>([]() -> Result<std::string> { return std::string("ok"); });
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, "ok");
  loop.Stop();
}

TEST(RuntimeLoopTest, StopRunsWhatIsQueuedAndNoHookAfter) {
  Counter c;
  RuntimeLoop loop(milliseconds(1), nullptr);
  loop.SetHooks(HooksOf(&c));
  loop.Start();
  loop.RequestPass();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) loop.Post([&] { ran++; });
  loop.Stop();
  EXPECT_EQ(ran.load(), 50);
  int passes = c.Get(&c.passes), ticks = c.Get(&c.ticks);
  loop.RequestPass();  // no thread: nothing runs the pass
  loop.Start();        // refused: stopped
  loop.Stop();
  EXPECT_EQ(c.Get(&c.passes), passes);
  EXPECT_EQ(c.Get(&c.ticks), ticks);
}

}  // namespace
}  // namespace det::master::server
