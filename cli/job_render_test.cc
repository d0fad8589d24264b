#include "cli/job_render.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using json = nlohmann::json;

const char* kPools = R"({"resourcePools": [
  {"name": "default", "schedulerType": "SCHEDULER_TYPE_PRIORITY", "defaultComputePool": true},
  {"name": "fair", "schedulerType": "SCHEDULER_TYPE_FAIR_SHARE", "defaultComputePool": false}]})";

TEST(JobRenderTest, SchedulerTypeOfPool) {
  json pools = json::parse(kPools);
  EXPECT_TRUE(*IsPriorityPool(pools, std::nullopt));
  EXPECT_TRUE(*IsPriorityPool(pools, std::string("default")));
  EXPECT_FALSE(*IsPriorityPool(pools, std::string("fair")));
  Result<bool> missing = IsPriorityPool(pools, std::string("gpu"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "Pool gpu not found");
}

TEST(JobRenderTest, PythonDatetime) {
  EXPECT_EQ(FormatPythonDatetime("2022-01-01T00:01:00Z"), "2022-01-01 00:01:00+00:00");
  EXPECT_EQ(FormatPythonDatetime("2022-01-01T00:01:00.5Z"), "2022-01-01 00:01:00.500000+00:00");
  EXPECT_EQ(FormatPythonDatetime("2022-01-01T00:01:00.123456789Z"),
            "2022-01-01 00:01:00.123456+00:00");
  EXPECT_EQ(FormatPythonDatetime("garbage"), "garbage");
}

TEST(JobRenderTest, PriorityTable) {
  json resp = json::parse(R"({"jobs": [
    {"full": {"jobId": "0d714127", "type": "TYPE_EXPERIMENT", "name": "first_job", "entityId": "1",
              "priority": 42, "weight": 1, "submissionTime": "2022-01-01T00:01:00Z",
              "allocatedSlots": 1, "requestedSlots": 1, "username": "user1",
              "summary": {"state": "STATE_SCHEDULED", "jobsAhead": 0}}},
    {"full": {"jobId": "73853c5c", "type": "TYPE_EXPERIMENT", "name": "second_job", "entityId": "2",
              "priority": 42, "weight": 1, "submissionTime": "2022-01-01T00:01:01Z",
              "allocatedSlots": 0, "requestedSlots": 1, "username": "user1",
              "summary": {"state": "STATE_QUEUED", "jobsAhead": 1}}},
    {"limited": {"jobId": "ffff", "type": "TYPE_COMMAND", "priority": 50, "weight": 1,
                 "allocatedSlots": 0, "requestedSlots": 0, "resourcePool": "default"}}]})");
  json jobs = UnpackJobs(resp["jobs"]);
  ASSERT_EQ(jobs.size(), 3u);
  std::string out = RenderPresto(JobListHeaders(true), JobListRows(jobs, true));
  EXPECT_EQ(out,
            " #   | ID       | Type            | Job Name       |   Priority | Submitted        "
            "         | Slots (acquired/needed)   | State           | User\n"
            "-----+----------+-----------------+----------------+------------+------------------"
            "---------+---------------------------+-----------------+--------\n"
            " 0   | 0d714127 | TYPE_EXPERIMENT | first_job (1)  |         42 | 2022-01-01 00:01:"
            "00+00:00 | 1/1                       | STATE_SCHEDULED | user1\n"
            " 1   | 73853c5c | TYPE_EXPERIMENT | second_job (2) |         42 | 2022-01-01 00:01:"
            "01+00:00 | 0/1                       | STATE_QUEUED    | user1\n"
            " N/A | ffff     | TYPE_COMMAND    | ***            |         50 | ***              "
            "         | 0/0                       | N/A             | ***");
}

TEST(JobRenderTest, FairShareShowsWeight) {
  json jobs = UnpackJobs(json::parse(R"([{"full": {"jobId": "a", "type": "TYPE_NOTEBOOK",
      "name": "nb", "entityId": "x", "priority": 42, "weight": 2.5,
      "submissionTime": "2022-01-01T00:01:00Z", "allocatedSlots": 0, "requestedSlots": 2,
      "username": "u", "summary": {"state": "STATE_QUEUED", "jobsAhead": 3}}}])"));
  std::vector<TableRow> rows = JobListRows(jobs, false);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(JobListHeaders(false)[4], "Weight");
  EXPECT_EQ(rows[0][0], "3");
  EXPECT_EQ(rows[0][3], "nb");  // only experiments get "(entityId)"
  EXPECT_EQ(rows[0][4], "2.5");
  EXPECT_EQ(rows[0][6], "0/2");
}

}  // namespace
}  // namespace det::cli
