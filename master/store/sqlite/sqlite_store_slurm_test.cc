// Store: the Slurm job of each allocation survives a reopen and leaves the open list when ended.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::store {
namespace {

TEST(SlurmJobsStoreTest, UpsertListEndAndReopen) {
  auto dir = det::testing::FreshTestDir("det_store_slurm_test_");
  std::string path = (dir / "det.db").string();
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    SlurmJobRow a{"t1.1", "17", "compute", "debug", 2, 100, false};
    SlurmJobRow b{"t2.1", "18", "compute", "debug", 1, 200, false};
    ASSERT_TRUE((*s)->UpsertSlurmJob(a).ok());
    ASSERT_TRUE((*s)->UpsertSlurmJob(b).ok());
    a.ended = true;
    ASSERT_TRUE((*s)->UpsertSlurmJob(a).ok());  // the same allocation: replaced
  }
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  auto open = (*s)->ListOpenSlurmJobs();
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].allocation_id, "t2.1");
  EXPECT_EQ((*open)[0].job_id, "18");
  EXPECT_EQ((*open)[0].partition, "debug");
  EXPECT_EQ((*open)[0].nodes, 1);
  s->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace det::master::store
