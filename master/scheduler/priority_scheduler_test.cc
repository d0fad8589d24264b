#include "master/scheduler/priority_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "master/scheduler/schedule.h"
#include "master/scheduler/test_util.h"

namespace det::master::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using testing::MakeAgent;
using testing::MakeJob;
using testing::MakeRequest;
using testing::Running;
using testing::StartedIds;

PoolConfig Priority(bool preemption) {
  PoolConfig c;
  c.scheduler.type = SchedulerType::kPriority;
  c.scheduler.preemption = preemption;
  return c;
}

// Adds a job of its own for each request (job id = request id).
void Add(ClusterSnapshot* s, AllocationRequest r, int priority, int64_t submitted) {
  s->jobs.push_back(MakeJob(r.job_id, submitted, priority));
  s->requests.push_back(std::move(r));
}

ClusterSnapshot TwoAgentsOfFour() {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 4), MakeAgent("a2", 4)};
  return s;
}

// §5.3: a pending important task preempts the least important running one; nothing starts in
// the tick that preempts, not even a small lower-priority task.
TEST(PrioritySchedulerTest, PreemptsLowerPriority) {
  ClusterSnapshot s = TwoAgentsOfFour();
  Add(&s, Running(MakeRequest("medium", "medium", 4), "a1"), 45, 1);
  Add(&s, Running(MakeRequest("high-running", "high-running", 4), "a2"), 40, 2);
  Add(&s, MakeRequest("low", "low", 1), 50, 3);
  Add(&s, MakeRequest("high4", "high4", 4), 40, 4);
  Add(&s, MakeRequest("high8", "high8", 8), 40, 5);
  ScheduleDecision d = Schedule(Priority(true), s);
  EXPECT_THAT(StartedIds(d), IsEmpty());
  EXPECT_THAT(d.to_release, ElementsAre("medium"));
}

// §5.3 backfilling: 40:2 starts, 45:1 starts backfilled, 50:1 preempts the 55 task.
TEST(PrioritySchedulerTest, Backfilling) {
  ClusterSnapshot s = TwoAgentsOfFour();
  Add(&s, Running(MakeRequest("p55", "p55", 1), "a2"), 55, 1);
  Add(&s, Running(MakeRequest("p40-running", "p40-running", 4), "a1"), 40, 2);
  Add(&s, MakeRequest("p50", "p50", 1), 50, 3);
  Add(&s, MakeRequest("p45", "p45", 1), 45, 4);
  Add(&s, MakeRequest("p40-2", "p40-2", 2), 40, 5);
  Add(&s, MakeRequest("p40-8", "p40-8", 8), 40, 6);
  ScheduleDecision d = Schedule(Priority(true), s);
  ASSERT_THAT(StartedIds(d), ElementsAre("p40-2", "p45"));
  EXPECT_FALSE(d.to_allocate[0].backfilled);
  EXPECT_TRUE(d.to_allocate[1].backfilled);
  EXPECT_EQ(d.to_allocate[0].agents, (std::vector<AgentSlots>{{"a2", {1, 2}}}));
  EXPECT_EQ(d.to_allocate[1].agents, (std::vector<AgentSlots>{{"a2", {3}}}));
  EXPECT_THAT(d.to_release, ElementsAre("p55"));
}

// Non-preemptible successes are not backfilled.
TEST(PrioritySchedulerTest, BackfillingSkipsNonPreemptible) {
  ClusterSnapshot s = TwoAgentsOfFour();
  Add(&s, MakeRequest("big", "big", 12), 40, 1);
  AllocationRequest small = MakeRequest("small", "small", 1);
  small.preemptible = false;
  Add(&s, small, 50, 2);
  Add(&s, MakeRequest("small-ok", "small-ok", 1), 50, 3);
  EXPECT_THAT(StartedIds(Schedule(Priority(true), s)), ElementsAre("small-ok"));
}

ClusterSnapshot SamePriority(int pending_slots) {
  ClusterSnapshot s = TwoAgentsOfFour();
  Job j1 = MakeJob("1", 1, 42), j2 = MakeJob("2", 2, 42), p = MakeJob("p", 3, 42);
  j1.position = QueuePosition::FromMicros(1);
  j2.position = QueuePosition::FromMicros(2);
  p.position = QueuePosition::Average(*j1.position, *j2.position);  // 1.5
  s.jobs = {j1, j2, p};
  s.requests = {Running(MakeRequest("r1", "1", 4), "a1"), Running(MakeRequest("r2", "2", 4), "a2"),
                MakeRequest("rp", "p", pending_slots)};
  return s;
}

// Same priority: only jobs behind the pending job's position are preempted.
TEST(PrioritySchedulerTest, SamePriorityPreemptsOnlyJobsBehind) {
  ScheduleDecision d = Schedule(Priority(true), SamePriority(4));
  EXPECT_THAT(StartedIds(d), IsEmpty());
  EXPECT_THAT(d.to_release, ElementsAre("r2"));
  d = Schedule(Priority(true), SamePriority(8));
  EXPECT_THAT(d.to_release, IsEmpty());
}

ClusterSnapshot NoPreemptionCase() {
  ClusterSnapshot s = TwoAgentsOfFour();
  Add(&s, MakeRequest("low4", "low4", 4), 50, 1);
  Add(&s, MakeRequest("low1", "low1", 1), 50, 2);
  Add(&s, MakeRequest("high1", "high1", 1), 40, 3);
  Add(&s, MakeRequest("high0", "high0", 0), 40, 4);
  Add(&s, MakeRequest("high4", "high4", 4), 40, 5);
  Add(&s, MakeRequest("low0", "low0", 0), 50, 6);
  return s;
}

// §5.3 with preemption disabled: everything but the 50:4 task starts.
TEST(PrioritySchedulerTest, PreemptionDisabled) {
  ScheduleDecision d = Schedule(Priority(false), NoPreemptionCase());
  EXPECT_THAT(StartedIds(d), UnorderedElementsAre("high1", "high4", "low1", "high0", "low0"));
  EXPECT_THAT(d.to_release, IsEmpty());
}

// A 12-slot priority-40 task blocks every priority-50 slot task (zero-slot tasks are scheduled
// independently and still start).
TEST(PrioritySchedulerTest, OversizedTaskBlocksLowerLevels) {
  ClusterSnapshot s = NoPreemptionCase();
  Add(&s, MakeRequest("high12", "high12", 12), 40, 7);
  ScheduleDecision d = Schedule(Priority(false), s);
  EXPECT_THAT(StartedIds(d), UnorderedElementsAre("high1", "high4", "high0", "low0"));
}

// A later smaller task of the same level starts while an earlier larger one cannot.
TEST(PrioritySchedulerTest, SameLevelSmallerTaskStarts) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 4)};
  Add(&s, Running(MakeRequest("r", "r", 2), "a1"), 42, 1);
  Add(&s, MakeRequest("big", "big", 4), 42, 2);
  Add(&s, MakeRequest("small", "small", 2), 42, 3);
  EXPECT_THAT(StartedIds(Schedule(Priority(false), s)), ElementsAre("small"));
}

TEST(PrioritySchedulerTest, DefaultPriorityFromPool) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 1)};
  s.jobs = {MakeJob("unset", 2), MakeJob("urgent", 3, 10)};
  s.requests = {MakeRequest("r-unset", "unset", 1), MakeRequest("r-urgent", "urgent", 1)};
  PoolConfig c = Priority(false);
  EXPECT_THAT(StartedIds(Schedule(c, s)), ElementsAre("r-urgent"));
  c.scheduler.default_priority = 5;
  EXPECT_THAT(StartedIds(Schedule(c, s)), ElementsAre("r-unset"));
}

TEST(PrioritySchedulerTest, NonPreemptibleIsNeverReleased) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 4)};
  AllocationRequest held = Running(MakeRequest("held", "held", 4), "a1");
  held.preemptible = false;
  Add(&s, held, 60, 1);
  Add(&s, MakeRequest("urgent", "urgent", 4), 1, 2);
  EXPECT_THAT(Schedule(Priority(true), s).to_release, IsEmpty());
}

}  // namespace
}  // namespace det::master::scheduler
