#include "master/server/scheduling_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

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
};

SchedulingLoop::Hooks HooksOf(Counter* c) {
  return {[c] { c->Pass(); }, [c] { c->Tick(); }};
}

TEST(SchedulingLoopTest, ARequestRunsAPass) {
  Counter c;
  SchedulingLoop loop(std::chrono::hours(1), HooksOf(&c));
  loop.Start();
  loop.Request();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  loop.Request();
  ASSERT_TRUE(c.WaitFor(&c.passes, 2));
  loop.Stop();
  EXPECT_EQ(c.ticks, 0);  // the interval has not passed
}

TEST(SchedulingLoopTest, RequestsBeforeStartShareOnePass) {
  Counter c;
  SchedulingLoop loop(std::chrono::hours(1), HooksOf(&c));
  for (int i = 0; i < 1000; ++i) loop.Request();
  loop.Start();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  loop.Stop();
  EXPECT_EQ(c.passes, 1);
}

TEST(SchedulingLoopTest, TicksWithoutRequests) {
  Counter c;
  SchedulingLoop loop(milliseconds(1), HooksOf(&c));
  loop.Start();
  ASSERT_TRUE(c.WaitFor(&c.ticks, 3));
  loop.Stop();
  EXPECT_EQ(c.passes, 0);
}

TEST(SchedulingLoopTest, AHookMayRequestAgain) {
  Counter c;
  std::atomic<SchedulingLoop*> self{nullptr};
  std::atomic<int> again{3};
  SchedulingLoop loop(std::chrono::hours(1), {[&] {
                                                c.Pass();
                                                if (again.fetch_sub(1) > 0) self.load()->Request();
                                              },
                                              [] {}});
  self = &loop;
  loop.Start();
  loop.Request();
  ASSERT_TRUE(c.WaitFor(&c.passes, 4));
  loop.Stop();
}

TEST(SchedulingLoopTest, NoHookRunsAfterStop) {
  Counter c;
  SchedulingLoop loop(milliseconds(1), HooksOf(&c));
  loop.Start();
  loop.Request();
  ASSERT_TRUE(c.WaitFor(&c.passes, 1));
  loop.Stop();
  int passes, ticks;
  {
    std::lock_guard<std::mutex> l(c.mu);
    passes = c.passes;
    ticks = c.ticks;
  }
  loop.Request();  // ignored: stopped
  loop.Start();    // refused: stopped
  loop.Stop();
  std::lock_guard<std::mutex> l(c.mu);
  EXPECT_EQ(c.passes, passes);
  EXPECT_EQ(c.ticks, ticks);
}

}  // namespace
}  // namespace det::master::server
