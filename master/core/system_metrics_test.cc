#include "master/core/system_metrics.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

using nlohmann::json;

TEST(SystemMetrics, Groups) {
  for (const char* g : {"cpu", "gpu", "memory", "disk", "network"})
    EXPECT_TRUE(IsSystemMetricGroup(g));
  EXPECT_FALSE(IsSystemMetricGroup("training"));
  EXPECT_FALSE(IsSystemMetricGroup("CPU"));
  EXPECT_EQ(SystemMetricGroupOfSeries("cpu_util_simple"), "cpu");
  EXPECT_EQ(SystemMetricGroupOfSeries("gpu_free_memory"), "gpu");
  EXPECT_EQ(SystemMetricGroupOfSeries("memory_free"), "memory");
  EXPECT_EQ(SystemMetricGroupOfSeries("disk_iops"), "disk");
  EXPECT_EQ(SystemMetricGroupOfSeries("net_throughput_sent"), "network");
  EXPECT_EQ(SystemMetricGroupOfSeries("loss"), "");
}

TEST(SystemMetrics, SplitsByAgent) {
  auto r = SplitSystemMetricsReport(
      "gpu", json{{"a1", {{"GPU-1", {{"gpu_util", 50}}}}}, {"a2", {{"GPU-2", {{"gpu_util", 7}}}}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].first, "a1");
  EXPECT_EQ((*r)[1].second["GPU-2"]["gpu_util"], 7);
}

TEST(SystemMetrics, RejectsBadReportsNamingTheField) {
  auto bad_group = SplitSystemMetricsReport("training", json::object());
  ASSERT_FALSE(bad_group.ok());
  EXPECT_NE(bad_group.status().message().find("training"), std::string::npos);
  auto not_object = SplitSystemMetricsReport("cpu", json{{"a1", 3}});
  ASSERT_FALSE(not_object.ok());
  EXPECT_NE(not_object.status().message().find("avgMetrics.a1"), std::string::npos);
  auto bad_value = SplitSystemMetricsReport("cpu", json{{"a1", {{"cpu_util_simple", "high"}}}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("cpu_util_simple"), std::string::npos);
  EXPECT_NE(bad_value.status().message().find("\"high\""), std::string::npos);
  auto too_deep = SplitSystemMetricsReport("gpu", json{{"a1", {{"G", {{"x", {{"y", 1}}}}}}}});
  EXPECT_FALSE(too_deep.ok());
}

TEST(SystemMetrics, SeriesOfEachGroup) {
  auto cpu = SeriesOfReport("cpu", "a1", json{{"cpu_util_simple", 3.5}});
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].name, "cpu_util_simple");
  EXPECT_EQ(cpu[0].agent_id, "a1");
  EXPECT_EQ(cpu[0].gpu_uuid, "");
  auto gpu = SeriesOfReport(
      "gpu", "a1",
      json{{"GPU-1", {{"gpu_util", 1}, {"gpu_free_memory", 2}}}, {"GPU-2", {{"gpu_util", 3}}}});
  ASSERT_EQ(gpu.size(), 3u);
  EXPECT_EQ(gpu[0].gpu_uuid, "GPU-1");
  EXPECT_EQ(gpu[2].gpu_uuid, "GPU-2");
  // Disk paths are labels this API does not list.
  auto disk = SeriesOfReport("disk", "a1", json{{"disk_iops", 4}, {"/", {{"disk_util", 40}}}});
  ASSERT_EQ(disk.size(), 1u);
  EXPECT_EQ(disk[0].name, "disk_iops");
}

TEST(SystemMetrics, ValuesOfSeries) {
  json gpu = {{"GPU-1", {{"gpu_util", 10}}}, {"GPU-2", {{"gpu_util", 20}}}};
  auto all = ValuesOfSeries(gpu, "gpu_util", "");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].first, "GPU-2");
  EXPECT_EQ(all[1].second, 20);
  auto one = ValuesOfSeries(gpu, "gpu_util", "GPU-1");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].second, 10);
  EXPECT_TRUE(ValuesOfSeries(gpu, "gpu_util", "GPU-9").empty());
  auto cpu = ValuesOfSeries(json{{"cpu_util_simple", 2.5}}, "cpu_util_simple", "");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].second, 2.5);
  EXPECT_TRUE(ValuesOfSeries(json{{"cpu_util_simple", 2.5}}, "memory_free", "").empty());
}

}  // namespace
}  // namespace det::master::core
