#include "master/scheduler/job_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "master/scheduler/test_util.h"

namespace det::master::scheduler {
namespace {

using testing::MakeAgent;
using testing::MakeJob;
using testing::MakeRequest;
using testing::Running;

PoolConfig Pool(SchedulerType type) {
  PoolConfig c;
  c.scheduler.type = type;
  return c;
}

// Jobs a..d submitted at 10, 20, 30, 40 (priority 42 unless given), one 1-slot task each.
ClusterSnapshot Queue(std::map<std::string, int> priorities = {}) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 1)};
  int64_t t = 10;
  for (const char* id : {"a", "b", "c", "d"}) {
    std::optional<int> p;
    if (priorities.count(id)) p = priorities[id];
    s.jobs.push_back(MakeJob(id, t, p));
    s.requests.push_back(MakeRequest(std::string("r") + id, id, 1, t));
    t += 10;
  }
  return s;
}

std::vector<std::string> Order(const ClusterSnapshot& s, SchedulerType type = SchedulerType::kPriority) {
  std::vector<std::string> out;
  for (const JobQueueEntry& e : JobQueueInfo(Pool(type), s)) out.push_back(e.job_id);
  return out;
}

void Apply(ClusterSnapshot* s, const std::string& job, const MoveResult& m) {
  for (Job& j : s->jobs) {
    if (j.id != job) continue;
    if (m.new_priority) j.priority = m.new_priority;
    if (m.new_position) j.position = m.new_position;
  }
}

TEST(JobQueueTest, PositionsFollowSubmissionAndJobsAheadCounts) {
  ClusterSnapshot s = Queue({{"c", 10}});
  s.requests[0] = Running(s.requests[0], "a1");
  s.requests.push_back(MakeRequest("ra2", "a", 2, 11));  // a second task of job a
  auto q = JobQueueInfo(Pool(SchedulerType::kPriority), s);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0].job_id, "c");
  EXPECT_EQ(q[0].priority, 10);
  EXPECT_EQ(q[1].job_id, "a");
  EXPECT_EQ(q[1].jobs_ahead, 1);
  EXPECT_EQ(q[1].state, JobQueueState::kScheduled);
  EXPECT_EQ(q[1].requested_slots, 3);
  EXPECT_EQ(q[1].allocated_slots, 1);
  EXPECT_EQ(q[1].position, QueuePosition::FromMicros(10));
  EXPECT_EQ(q[3].job_id, "d");
  EXPECT_EQ(q[3].jobs_ahead, 3);
  EXPECT_EQ(q[3].state, JobQueueState::kQueued);
}

TEST(JobQueueTest, FairShareReportsNoJobsAhead) {
  ClusterSnapshot s = Queue({{"c", 10}});
  auto q = JobQueueInfo(Pool(SchedulerType::kFairShare), s);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0].job_id, "a");  // submission order, priority ignored
  EXPECT_EQ(q[0].jobs_ahead, -1);
}

TEST(JobQueueTest, InvisibleRequestsAreNotListed) {
  ClusterSnapshot s = Queue();
  s.requests[1].user_visible = false;
  EXPECT_EQ(Order(s), (std::vector<std::string>{"a", "c", "d"}));
}

TEST(JobQueueTest, SetPriorityResetsPositionUnlessUnchanged) {
  PoolConfig c = Pool(SchedulerType::kPriority);
  Job j = MakeJob("j", 100, 42);
  j.position = QueuePosition::FromMicros(5);
  auto same = SetPriority(c, j, 42);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->position, QueuePosition::FromMicros(5));
  auto changed = SetPriority(c, j, 7);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed->priority, 7);
  EXPECT_EQ(changed->position, QueuePosition::FromMicros(100));
  EXPECT_EQ(SetPriority(c, j, 0).status().message(), "priority must be between 1 and 99, got 0");
  EXPECT_EQ(SetPriority(c, j, 100).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SetPriority(Pool(SchedulerType::kFairShare), j, 7).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(JobQueueTest, SetWeightOnlyForFairShare) {
  Job j = MakeJob("j", 1);
  auto w = SetWeight(Pool(SchedulerType::kFairShare), j, 2.5);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->weight, 2.5);
  EXPECT_EQ(SetWeight(Pool(SchedulerType::kFairShare), j, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SetWeight(Pool(SchedulerType::kPriority), j, 2).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(JobQueueTest, ResourcePoolChange) {
  ResourcePoolsConfig pools;
  pools.pools = {PoolConfig{}, PoolConfig{"compute", "", {}, 100, {}, {}}};
  EXPECT_TRUE(CheckResourcePoolChange(pools, true, "compute").ok());
  EXPECT_EQ(CheckResourcePoolChange(pools, true, "nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(CheckResourcePoolChange(pools, false, "compute").code(),
            StatusCode::kFailedPrecondition);
}

// The seed's example: the second job moves ahead of the first (HEAD is the second anchor).
TEST(JobQueueTest, AheadOfFirstJobUsesHead) {
  ClusterSnapshot s = Queue();
  auto m = MoveJob(Pool(SchedulerType::kPriority), s, "b", "a", true, 1000);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->changed);
  EXPECT_FALSE(m->new_priority);
  EXPECT_EQ(m->new_position->ToString(), "5.5");  // avg(10, HEAD=1)
  Apply(&s, "b", *m);
  EXPECT_EQ(Order(s), (std::vector<std::string>{"b", "a", "c", "d"}));
}

TEST(JobQueueTest, AheadOfMiddleJobAverages) {
  ClusterSnapshot s = Queue();
  auto m = MoveJob(Pool(SchedulerType::kPriority), s, "d", "b", true, 1000);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->new_position->ToString(), "15");
  Apply(&s, "d", *m);
  EXPECT_EQ(Order(s), (std::vector<std::string>{"a", "d", "b", "c"}));
}

TEST(JobQueueTest, BehindOfLastJobUsesTail) {
  ClusterSnapshot s = Queue();
  auto m = MoveJob(Pool(SchedulerType::kPriority), s, "a", "d", false, 1000);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->new_position->ToString(), "520");  // avg(40, TAIL=now=1000)
  Apply(&s, "a", *m);
  EXPECT_EQ(Order(s), (std::vector<std::string>{"b", "c", "d", "a"}));
}

TEST(JobQueueTest, NoOpMoves) {
  ClusterSnapshot s = Queue();
  PoolConfig c = Pool(SchedulerType::kPriority);
  EXPECT_FALSE(MoveJob(c, s, "a", "b", true, 1000)->changed);   // already just ahead of b
  EXPECT_FALSE(MoveJob(c, s, "b", "a", false, 1000)->changed);  // already just behind a
  EXPECT_FALSE(MoveJob(c, s, "a", "a", true, 1000)->changed);   // relative to itself
}

// Repeated moves to the head keep halving the gap and never collide.
TEST(JobQueueTest, RepeatedMovesStayExact) {
  ClusterSnapshot s = Queue();
  PoolConfig c = Pool(SchedulerType::kPriority);
  for (int i = 0; i < 100; ++i) {
    std::vector<std::string> order = Order(s);
    std::string mover = order.back(), anchor = order.front();
    auto m = MoveJob(c, s, mover, anchor, true, 1000);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    Apply(&s, mover, *m);
    ASSERT_EQ(Order(s).front(), mover);
  }
}

// Moving next to a job of another priority takes that priority (and resets the position).
TEST(JobQueueTest, MoveTakesAnchorPriority) {
  ClusterSnapshot s = Queue({{"a", 10}, {"b", 10}});
  PoolConfig c = Pool(SchedulerType::kPriority);
  // d (42, pos 40) behind a (10): second anchor b (pos 20); d's reset position 40 is not between
  // 10 and 20, so it is averaged to 15.
  auto m = MoveJob(c, s, "d", "a", false, 1000);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->new_priority, 10);
  EXPECT_EQ(m->new_position->ToString(), "15");
  Apply(&s, "d", *m);
  EXPECT_EQ(Order(s), (std::vector<std::string>{"a", "d", "b", "c"}));
  // Order a(10, pos 10), d(10, pos 40), b, c. Moving c behind a: c takes priority 10 and its
  // reset position 30 already lies between a (10) and d (40), so only the priority changes.
  s = Queue({{"a", 10}, {"d", 10}});
  ASSERT_EQ(Order(s), (std::vector<std::string>{"a", "d", "b", "c"}));
  m = MoveJob(c, s, "c", "a", false, 1000);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->new_priority, 10);
  EXPECT_EQ(m->new_position->ToString(), "30");
  Apply(&s, "c", *m);
  EXPECT_EQ(Order(s), (std::vector<std::string>{"a", "c", "d", "b"}));
  // The job right behind the anchor is not moved, whatever its priority (as in Determined).
  EXPECT_FALSE(MoveJob(c, s, "d", "c", false, 1000)->changed);
}

// Rule 6e: when the average lands on the wrong side of the anchor, use anchor -/+ 1 unit.
TEST(JobQueueTest, WrongSideAverageFallsBackToOneUnit) {
  ClusterSnapshot s = Queue({{"d", 10}});  // order: d(10, pos 40), a, b, c
  ASSERT_EQ(Order(s), (std::vector<std::string>{"d", "a", "b", "c"}));
  auto m = MoveJob(Pool(SchedulerType::kPriority), s, "c", "a", true, 1000);
  ASSERT_TRUE(m.ok());
  // second anchor d has position 40 > a's 10: avg 25 >= 10 -> 10 - 1 = 9.
  EXPECT_EQ(m->new_position->ToString(), "9");
  Apply(&s, "c", *m);
  EXPECT_EQ(Order(s), (std::vector<std::string>{"d", "c", "a", "b"}));
}

TEST(JobQueueTest, MoveErrors) {
  ClusterSnapshot s = Queue();
  auto fair = MoveJob(Pool(SchedulerType::kFairShare), s, "a", "b", true, 1000);
  EXPECT_EQ(fair.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(fair.status().message(),
            "ahead-of and behind-of need the priority scheduler; resource pool \"default\" uses "
            "fair_share");
  EXPECT_EQ(MoveJob(Pool(SchedulerType::kPriority), s, "x", "b", true, 1000).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(MoveJob(Pool(SchedulerType::kPriority), s, "a", "y", true, 1000).status().message(),
            "job y is not queued in resource pool \"default\"");
  // Two jobs at the same position cannot be split.
  s.jobs[0].position = QueuePosition::FromMicros(20);  // a and b both at 20
  auto m = MoveJob(Pool(SchedulerType::kPriority), s, "d", "b", true, 1000);
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition);
}

TEST(JobQueueTest, ParseUpdateBatchArgs) {
  auto a = ParseJobUpdateArg("73853c5c.priority=1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job_id, "73853c5c");
  EXPECT_EQ(a->op, "priority");
  EXPECT_EQ(a->value, "1");
  auto b = ParseJobUpdateArg("job2.resource-pool=\"compute\"");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->value, "compute");
  EXPECT_EQ(ParseJobUpdateArg("job3.ahead-of=job1")->op, "ahead-of");
  EXPECT_FALSE(ParseJobUpdateArg("job.priority").ok());
  EXPECT_FALSE(ParseJobUpdateArg("job.colour=red").ok());
  EXPECT_FALSE(ParseJobUpdateArg("job.weight=").ok());
}

}  // namespace
}  // namespace det::master::scheduler
