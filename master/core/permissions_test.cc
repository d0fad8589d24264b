#include "master/core/permissions.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

Subject User(int64_t id, const std::string& name, bool admin = false) {
  Subject s;
  s.user_id = id;
  s.username = name;
  s.admin = admin;
  return s;
}

Subject Allocation(const std::string& id, int64_t trial) {
  Subject s;
  s.is_allocation = true;
  s.allocation_id = id;
  s.trial_id = trial;
  return s;
}

Resource Experiment(int64_t id, int64_t owner) {
  Resource r;
  r.kind = "experiment " + std::to_string(id);
  r.owner_id = owner;
  r.experiment_id = id;
  return r;
}

Resource Trial(int64_t id, int64_t experiment, int64_t owner) {
  Resource r;
  r.kind = "trial " + std::to_string(id);
  r.owner_id = owner;
  r.trial_id = id;
  r.experiment_id = experiment;
  return r;
}

TEST(PermissionsTest, AnyUserReadsAndCreates) {
  EXPECT_TRUE(Authorize(User(2, "bob"), Action::kRead, Experiment(1, 1)).allowed);
  EXPECT_TRUE(Authorize(User(2, "bob"), Action::kCreate, Resource{}).allowed);
  // Models and templates: every user edits them, as in Determined.
  EXPECT_TRUE(Authorize(User(2, "bob"), Action::kEditShared, Experiment(1, 1)).allowed);
  EXPECT_FALSE(Authorize(Allocation("a.1", 7), Action::kEditShared, Trial(7, 1, 1)).allowed);
}

TEST(PermissionsTest, OwnerOrAdminModifies) {
  EXPECT_TRUE(Authorize(User(1, "alice"), Action::kModify, Experiment(5, 1)).allowed);
  EXPECT_TRUE(Authorize(User(9, "root", true), Action::kModify, Experiment(5, 1)).allowed);
  AccessDecision d = Authorize(User(2, "bob"), Action::kModify, Experiment(5, 1));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason, "user 'bob' may not change experiment 5: only its owner or an admin may");
}

TEST(PermissionsTest, UnownedResourceNeedsAdmin) {
  // owner 0 (nobody) never matches user id 0 of a broken principal.
  Resource r;
  r.kind = "template t";
  EXPECT_FALSE(Authorize(User(0, "ghost"), Action::kModify, r).allowed);
  EXPECT_TRUE(Authorize(User(1, "root", true), Action::kModify, r).allowed);
}

TEST(PermissionsTest, OnlyAdminsManageUsersAndCluster) {
  Resource agent;
  agent.kind = "agent a1";
  for (Action a : {Action::kManageUsers, Action::kManageCluster}) {
    EXPECT_TRUE(Authorize(User(1, "root", true), a, agent).allowed);
    AccessDecision d = Authorize(User(2, "bob"), a, agent);
    EXPECT_FALSE(d.allowed);
    EXPECT_NE(d.reason.find("only an admin may"), std::string::npos) << d.reason;
    EXPECT_NE(d.reason.find("agent a1"), std::string::npos) << d.reason;
  }
}

TEST(PermissionsTest, AllocationReachesOnlyItsOwnTrial) {
  Subject alloc = Allocation("a.1", 7);
  EXPECT_TRUE(Authorize(alloc, Action::kTrialReport, Trial(7, 3, 1)).allowed);
  EXPECT_TRUE(Authorize(alloc, Action::kRead, Trial(7, 3, 1)).allowed);
  AccessDecision d = Authorize(alloc, Action::kTrialReport, Trial(8, 3, 1));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason, "allocation a.1 may not report for trial 8: it belongs to another trial");
}

TEST(PermissionsTest, AllocationNeverModifiesOrManages) {
  Subject alloc = Allocation("a.1", 7);
  for (Action a :
       {Action::kModify, Action::kCreate, Action::kManageUsers, Action::kManageCluster}) {
    EXPECT_FALSE(Authorize(alloc, a, Trial(7, 3, 1)).allowed) << ActionName(a);
  }
}

TEST(PermissionsTest, AllocationChecksItsAllocationId) {
  Subject alloc = Allocation("a.1", 7);
  Resource mine;
  mine.kind = "allocation a.1";
  mine.allocation_id = "a.1";
  EXPECT_TRUE(Authorize(alloc, Action::kTrialReport, mine).allowed);
  Resource other = mine;
  other.allocation_id = "b.1";
  other.kind = "allocation b.1";
  EXPECT_FALSE(Authorize(alloc, Action::kTrialReport, other).allowed);
}

TEST(PermissionsTest, AllocationReadsOnlyItsOwnExperiment) {
  Subject alloc = Allocation("a.1", 7);
  alloc.experiment_id = 3;
  EXPECT_TRUE(Authorize(alloc, Action::kRead, Experiment(3, 1)).allowed);
  EXPECT_FALSE(Authorize(alloc, Action::kRead, Experiment(4, 1)).allowed);
  EXPECT_FALSE(Authorize(alloc, Action::kTrialReport, Experiment(3, 1)).allowed);
  // A cluster-wide read (no trial resource) is not the allocation's.
  Resource users;
  users.kind = "users";
  EXPECT_FALSE(Authorize(alloc, Action::kRead, users).allowed);
}

TEST(PermissionsTest, AllocationReadsCheckpointsOfItsExperimentOrOwner) {
  Subject alloc = Allocation("a.1", 7);
  alloc.experiment_id = 3;
  alloc.owner_id = 1;
  Resource same_experiment = Trial(8, 3, 2);
  same_experiment.readable_by_owner_trials = true;
  EXPECT_TRUE(Authorize(alloc, Action::kRead, same_experiment).allowed);
  Resource same_owner = Trial(20, 9, 1);
  same_owner.readable_by_owner_trials = true;
  EXPECT_TRUE(Authorize(alloc, Action::kRead, same_owner).allowed);
  EXPECT_FALSE(Authorize(alloc, Action::kTrialReport, same_owner).allowed);
  Resource others = Trial(30, 10, 2);
  others.readable_by_owner_trials = true;
  EXPECT_FALSE(Authorize(alloc, Action::kRead, others).allowed);
  // Trial data that is not a shared checkpoint stays the trial's own.
  EXPECT_FALSE(Authorize(alloc, Action::kRead, Trial(8, 3, 1)).allowed);
}

TEST(PermissionsTest, UserReportingForATrialMustOwnIt) {
  EXPECT_TRUE(Authorize(User(1, "alice"), Action::kTrialReport, Trial(7, 3, 1)).allowed);
  EXPECT_FALSE(Authorize(User(2, "bob"), Action::kTrialReport, Trial(7, 3, 1)).allowed);
  EXPECT_TRUE(Authorize(User(3, "root", true), Action::kTrialReport, Trial(7, 3, 1)).allowed);
}

TEST(PermissionsTest, TaskProxyIsForItsOwnerOrAnAdmin) {
  TaskProxy notebook{"nb-1", "NOTEBOOK", 7, "alice"};
  Subject alice = User(7, "alice"), bob = User(8, "bob"), root = User(1, "admin", true);
  EXPECT_TRUE(AuthorizeTaskProxy(&alice, notebook, false).allowed);
  EXPECT_TRUE(AuthorizeTaskProxy(&root, notebook, false).allowed);
  AccessDecision d = AuthorizeTaskProxy(&bob, notebook, false);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("user 'bob' may not reach the proxy of task nb-1"), std::string::npos);
  EXPECT_NE(d.reason.find("(alice)"), std::string::npos);
  Subject alloc = Allocation("nb-1.1", 0);
  EXPECT_FALSE(AuthorizeTaskProxy(&alloc, notebook, false).allowed);
  // No credential: refused, a WebSocket to a notebook too.
  EXPECT_FALSE(AuthorizeTaskProxy(nullptr, notebook, false).allowed);
  EXPECT_FALSE(AuthorizeTaskProxy(nullptr, notebook, true).allowed);
}

TEST(PermissionsTest, AShellsTunnelPassesWithoutACredential) {
  TaskProxy shell{"sh-1", "SHELL", 7, "alice"};
  // Determined's ssh ProxyCommand sends none: the shell's own key is the credential.
  EXPECT_TRUE(AuthorizeTaskProxy(nullptr, shell, true).allowed);
  // A plain request to a shell still needs one.
  EXPECT_FALSE(AuthorizeTaskProxy(nullptr, shell, false).allowed);
  // With a credential the owner rule applies.
  Subject bob = User(8, "bob");
  EXPECT_FALSE(AuthorizeTaskProxy(&bob, shell, true).allowed);
  Subject alice = User(7, "alice");
  EXPECT_TRUE(AuthorizeTaskProxy(&alice, shell, true).allowed);
}

}  // namespace
}  // namespace det::master::core
