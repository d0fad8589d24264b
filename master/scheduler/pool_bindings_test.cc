#include "master/scheduler/pool_bindings.h"

#include <gtest/gtest.h>

namespace det::master::scheduler {
namespace {

ResourcePoolsConfig Pools() {
  ResourcePoolsConfig c;
  for (const char* name : {"default", "gpu", "aux", "spare"}) {
    PoolConfig p;
    p.pool_name = name;
    c.pools.push_back(p);
  }
  c.default_aux_pool = "aux";
  return c;
}

TEST(PoolBindingsTest, ABoundPoolIsAvailableOnlyToItsWorkspaces) {
  PoolBindings b{{"gpu", {2, 3}}};
  EXPECT_EQ(PoolsAvailableTo(Pools(), b, 2),
            (std::vector<std::string>{"default", "gpu", "aux", "spare"}));
  EXPECT_EQ(PoolsAvailableTo(Pools(), b, 4),
            (std::vector<std::string>{"default", "aux", "spare"}));
  EXPECT_TRUE(PoolAvailableTo(b, "spare", 4));
  EXPECT_FALSE(PoolAvailableTo(b, "gpu", 1));
}

TEST(PoolBindingsTest, ARequestGetsTheWorkspaceDefaultThenTheClusters) {
  PoolBindings b{{"gpu", {2}}};
  WorkspacePools w{2, "gpu", ""};
  EXPECT_EQ(*ResolvePoolForWorkspace(Pools(), b, w, "", 1), "gpu");
  EXPECT_EQ(*ResolvePoolForWorkspace(Pools(), b, w, "", 0), "aux");
  EXPECT_EQ(*ResolvePoolForWorkspace(Pools(), b, w, "spare", 1), "spare");
  WorkspacePools other{5, "", ""};
  EXPECT_EQ(*ResolvePoolForWorkspace(Pools(), b, other, "", 4), "default");
  Result<std::string> refused = ResolvePoolForWorkspace(Pools(), b, other, "gpu", 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "resource pool gpu does not exist or is not available to workspace id 5");
  // A default the workspace can no longer use (bound elsewhere since) is refused too.
  WorkspacePools stale{5, "gpu", ""};
  EXPECT_FALSE(ResolvePoolForWorkspace(Pools(), b, stale, "", 1).ok());
  // A pool that does not exist is the caller's to refuse with its own message.
  EXPECT_EQ(*ResolvePoolForWorkspace(Pools(), b, other, "nope", 1), "nope");
}

TEST(PoolBindingsTest, DefaultPoolsAndUnknownPoolsCannotBeBound) {
  EXPECT_EQ(CheckBindablePool(Pools(), "default").message(),
            "default resource pool default cannot be bound to any workspace");
  EXPECT_FALSE(CheckBindablePool(Pools(), "aux").ok());
  EXPECT_EQ(CheckBindablePool(Pools(), "nope").code(), StatusCode::kNotFound);
  EXPECT_TRUE(CheckBindablePool(Pools(), "gpu").ok());
}

TEST(PoolBindingsTest, AWorkspaceDefaultMustBeAvailableToIt) {
  PoolBindings b{{"gpu", {2}}};
  EXPECT_TRUE(CheckWorkspaceDefaultPool(Pools(), b, 2, "gpu").ok());
  EXPECT_TRUE(CheckWorkspaceDefaultPool(Pools(), b, 3, "").ok());
  EXPECT_EQ(CheckWorkspaceDefaultPool(Pools(), b, 3, "gpu").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(CheckWorkspaceDefaultPool(Pools(), b, 3, "nope").ok());
}

}  // namespace
}  // namespace det::master::scheduler
