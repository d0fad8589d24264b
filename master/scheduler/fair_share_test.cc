#include "master/scheduler/fair_share.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "master/scheduler/schedule.h"
#include "master/scheduler/test_util.h"

namespace det::master::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeAgent;
using testing::MakeJob;
using testing::MakeRequest;
using testing::Running;

PoolConfig FairShare() {
  PoolConfig c;
  c.scheduler.type = SchedulerType::kFairShare;
  return c;
}

void AddTasks(ClusterSnapshot* s, const std::string& job, int count, int slots) {
  for (int i = 0; i < count; ++i) {
    s->requests.push_back(MakeRequest(job + "-" + std::to_string(i), job, slots, i));
  }
}

std::map<std::string, int> StartedSlotsByJob(const ClusterSnapshot& s, const ScheduleDecision& d) {
  std::map<std::string, int> out;
  for (const Allocation& a : d.to_allocate) {
    for (const AllocationRequest& r : s.requests) {
      if (r.id == a.request_id) out[r.job_id] += r.slots;
    }
  }
  return out;
}

TEST(FairShareTest, MaxSlotsCapsShare) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 4)};
  Job g1 = MakeJob("g1", 1);
  g1.max_slots = 1;
  s.jobs = {g1, MakeJob("g2", 2)};
  AddTasks(&s, "g1", 4, 1);
  AddTasks(&s, "g2", 4, 1);
  auto started = StartedSlotsByJob(s, Schedule(FairShare(), s));
  EXPECT_EQ(started["g1"], 1);
  EXPECT_EQ(started["g2"], 3);
}

TEST(FairShareTest, NewJobOnAFullPoolTakesItsShareByPreemption) {
  // The pending job's tasks fit nowhere right now; they still count toward its share.
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 4)};
  Job light = MakeJob("light", 1), heavy = MakeJob("heavy", 2);
  heavy.weight = 3;
  s.jobs = {light, heavy};
  for (int i = 0; i < 4; ++i) {
    s.requests.push_back(Running(MakeRequest("light-" + std::to_string(i), "light", 1, i), "a", i));
  }
  AddTasks(&s, "heavy", 4, 1);
  ScheduleDecision d = Schedule(FairShare(), s);
  EXPECT_THAT(d.to_release, ElementsAre("light-0", "light-1", "light-2"));
  EXPECT_THAT(d.to_allocate, IsEmpty()) << "no start while the released slots are still held";
}

TEST(FairShareTest, SharesFollowWeights) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 8)};
  Job g1 = MakeJob("g1", 1), g2 = MakeJob("g2", 2);
  g1.weight = 10;
  g2.weight = 30;
  s.jobs = {g1, g2};
  AddTasks(&s, "g1", 8, 1);
  AddTasks(&s, "g2", 8, 1);
  auto started = StartedSlotsByJob(s, Schedule(FairShare(), s));
  EXPECT_EQ(started["g1"], 2);
  EXPECT_EQ(started["g2"], 6);
}

TEST(FairShareTest, TwoMultiSlotJobsOnTwoAgents) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 4), MakeAgent("a2", 4)};
  s.jobs = {MakeJob("g1", 1), MakeJob("g2", 2)};
  AddTasks(&s, "g1", 1, 4);
  AddTasks(&s, "g2", 1, 4);
  auto started = StartedSlotsByJob(s, Schedule(FairShare(), s));
  EXPECT_EQ(started["g1"], 4);
  EXPECT_EQ(started["g2"], 4);
}

// Both jobs would get 1 of 2 slots and neither could start: the newest job is disabled.
TEST(FairShareTest, DeadlockBreakerFavoursOldestJob) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 2)};
  s.jobs = {MakeJob("g1", 1), MakeJob("g2", 2)};
  AddTasks(&s, "g1", 1, 2);
  AddTasks(&s, "g2", 1, 2);
  ScheduleDecision d = Schedule(FairShare(), s);
  ASSERT_EQ(d.to_allocate.size(), 1u);
  EXPECT_EQ(d.to_allocate[0].request_id, "g1-0");
  // Same outcome whatever order the snapshot lists the jobs in.
  std::swap(s.jobs[0], s.jobs[1]);
  std::swap(s.requests[0], s.requests[1]);
  d = Schedule(FairShare(), s);
  ASSERT_EQ(d.to_allocate.size(), 1u);
  EXPECT_EQ(d.to_allocate[0].request_id, "g1-0");
}

TEST(FairShareTest, TaskLargerThanClusterIsIgnored) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 4)};
  s.jobs = {MakeJob("five", 1), MakeJob("four", 2)};
  AddTasks(&s, "five", 1, 5);
  AddTasks(&s, "four", 1, 4);
  auto started = StartedSlotsByJob(s, Schedule(FairShare(), s));
  EXPECT_EQ(started.count("five"), 0u);
  EXPECT_EQ(started["four"], 4);
}

TEST(FairShareTest, LoweredMaxSlotsReleasesOldestTasks) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 4)};
  Job g = MakeJob("g", 1);
  g.max_slots = 2;
  s.jobs = {g};
  for (int i = 0; i < 4; ++i) {
    s.requests.push_back(Running(MakeRequest("t" + std::to_string(i), "g", 1, i), "a", i));
  }
  ScheduleDecision d = Schedule(FairShare(), s);
  EXPECT_THAT(d.to_release, ElementsAre("t0", "t1"));
  EXPECT_THAT(d.to_allocate, IsEmpty());
}

// A new job whose tasks fit shrinks the running job's share: release and start never happen
// for the same job in one tick.
TEST(FairShareTest, NewJobPreemptsOverShareJob) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 4)};
  s.jobs = {MakeJob("old", 1), MakeJob("new", 2)};
  for (int i = 0; i < 3; ++i) {
    s.requests.push_back(Running(MakeRequest("old" + std::to_string(i), "old", 1, i), "a", i));
  }
  AddTasks(&s, "new", 4, 1);
  ScheduleDecision d = Schedule(FairShare(), s);
  EXPECT_THAT(d.to_release, ElementsAre("old0"));
  // Two starts were decided; only one slot is free until old0 exits.
  ASSERT_EQ(d.to_allocate.size(), 1u);
  EXPECT_EQ(d.to_allocate[0].request_id, "new-0");
}

TEST(FairShareTest, NonPreemptibleSlotsArePreOffered) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 4)};
  s.jobs = {MakeJob("held", 1), MakeJob("other", 2)};
  for (int i = 0; i < 3; ++i) {
    AllocationRequest r = Running(MakeRequest("h" + std::to_string(i), "held", 1, i), "a", i);
    r.preemptible = false;
    s.requests.push_back(r);
  }
  AddTasks(&s, "other", 2, 1);
  ScheduleDecision d = Schedule(FairShare(), s);
  EXPECT_THAT(d.to_release, IsEmpty());
  ASSERT_EQ(d.to_allocate.size(), 1u);
  EXPECT_EQ(d.to_allocate[0].request_id, "other-0");
}

TEST(FairShareTest, ZeroSlotTasksStartDirectly) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a", 0)};
  s.jobs = {MakeJob("g", 1)};
  AddTasks(&s, "g", 2, 0);
  EXPECT_EQ(Schedule(FairShare(), s).to_allocate.size(), 2u);
}

}  // namespace
}  // namespace det::master::scheduler
