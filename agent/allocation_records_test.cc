#include "agent/allocation_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/testing/temp_dir.h"

namespace det::agent {
namespace {

using testing::TempDir;

class AllocationRecordsTest : public ::testing::Test {
 protected:
  TempDir tmp_{"records"};
  const std::string data_dir_ = tmp_.path();
};

TEST_F(AllocationRecordsTest, WriteListRemove) {
  AllocationRecords records(data_dir_);
  EXPECT_EQ(records.dir(), data_dir_ + "/allocations");
  auto empty = records.List();  // no directory yet
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  ASSERT_TRUE(records.Write({"3.1", data_dir_ + "/work/3.1", 0}).ok());
  ASSERT_TRUE(records.Write({"3.1", data_dir_ + "/work/3.1", 4242}).ok());  // replaces
  ASSERT_TRUE(records.Write({"1.2", data_dir_ + "/work/1.2", 17}).ok());
  auto listed = records.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].allocation_id, "1.2");
  EXPECT_EQ((*listed)[0].pid, 17);
  EXPECT_EQ((*listed)[1].allocation_id, "3.1");
  EXPECT_EQ((*listed)[1].workdir, data_dir_ + "/work/3.1");
  EXPECT_EQ((*listed)[1].pid, 4242);

  ASSERT_TRUE(records.Remove("3.1").ok());
  ASSERT_TRUE(records.Remove("3.1").ok());  // already gone: fine
  listed = records.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].allocation_id, "1.2");
}

TEST_F(AllocationRecordsTest, GarbledRecordStillNamesItsAllocation) {
  AllocationRecords records(data_dir_);
  std::filesystem::create_directories(records.dir());
  std::ofstream(records.dir() + "/7.1.json") << "{not json";
  std::ofstream(records.dir() + "/8.1.json.tmp") << "{}";  // an interrupted write
  std::ofstream(records.dir() + "/README") << "x";
  auto listed = records.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].allocation_id, "7.1");
  EXPECT_EQ((*listed)[0].pid, 0);
  EXPECT_EQ((*listed)[0].workdir, "");
}

TEST_F(AllocationRecordsTest, RejectsIdsThatAreNotOnePathComponent) {
  AllocationRecords records(data_dir_);
  for (std::string bad : {"", ".", "..", "a/b", "../x"}) {
    EXPECT_FALSE(records.Write({bad, "/w", 1}).ok()) << bad;
    EXPECT_FALSE(records.Remove(bad).ok()) << bad;
    EXPECT_FALSE(IsValidAllocationId(bad)) << bad;
  }
  EXPECT_TRUE(IsValidAllocationId("trial-3.1"));
  EXPECT_EQ(AllocationWorkDir("/d", "3.1"), "/d/work/3.1");
}

}  // namespace
}  // namespace det::agent
