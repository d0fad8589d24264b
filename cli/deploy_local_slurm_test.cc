#include "cli/deploy_local_slurm.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

TEST(LocalSlurmConfTest, LoopbackPortsPathsAndPartitions) {
  std::string c = LocalSlurmConf("/d/slurm", "/d/munge/munge.sock", "vm", 8, 40001, 40002,
                                 {"compute", "batch"}, "root");
  EXPECT_NE(c.find("SlurmctldHost=vm(127.0.0.1)\n"), std::string::npos);
  EXPECT_NE(c.find("SlurmctldPort=40001\n"), std::string::npos);
  EXPECT_NE(c.find("SlurmdPort=40002\n"), std::string::npos);
  EXPECT_NE(c.find("AuthInfo=socket=/d/munge/munge.sock\n"), std::string::npos);
  EXPECT_NE(c.find("StateSaveLocation=/d/slurm/state\n"), std::string::npos);
  EXPECT_NE(c.find("NodeName=vm NodeAddr=127.0.0.1 CPUs=8 "), std::string::npos);
  EXPECT_NE(c.find("PartitionName=compute Nodes=ALL Default=YES"), std::string::npos);
  EXPECT_NE(c.find("PartitionName=batch Nodes=ALL MaxTime"), std::string::npos);
  EXPECT_NE(c.find("SlurmUser=root\n"), std::string::npos);
}

TEST(LocalSlurmConfTest, MasterConfigMapsPoolsToPartitions) {
  std::string m = LocalSlurmMasterConfig("/d/slurm/slurm.conf", {"compute", "batch"});
  EXPECT_NE(m.find("type: slurm"), std::string::npos);
  EXPECT_NE(m.find("slurm_conf: /d/slurm/slurm.conf"), std::string::npos);
  EXPECT_NE(m.find("default_compute_resource_pool: compute"), std::string::npos);
  EXPECT_NE(m.find("- pool_name: batch\n    provider: {type: hpc, partition: batch}"),
            std::string::npos);
}

}  // namespace
}  // namespace det::cli
