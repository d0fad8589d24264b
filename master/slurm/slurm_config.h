#pragma once
// SlurmConfig: `resource_manager: {type: slurm, ...}` of the master config. Each resource pool is
// a Slurm partition (the pool's name, or `provider: {type: hpc, partition: P}` as Determined
// writes it). Pure: parsing and validation only.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"

namespace det::master::slurm {

struct PartitionOverride {
  std::optional<std::string> slot_type;  // cpu | cuda | rocm
};

struct SlurmConfig {
  // How jobs reach the master (DET_MASTER of the trials).
  std::string master_host = "127.0.0.1";
  int master_port = 0;  // 0: the master's own port
  // Default slot type of every partition: cpu slots are CPUs, cuda/rocm slots are GPUs.
  std::string slot_type = "cpu";
  // Scripts, job output and the agents' work directories. Must be visible on every node.
  std::string job_storage_root;
  // Directories prepended to PATH when running the Slurm tools; SLURM_CONF for them.
  std::string path;
  std::string slurm_conf;
  // What the job's tasks run: the agent binary, the Python and the harness it uses.
  std::string agent_path;
  std::string python;
  std::string harness_path;
  // How often squeue is asked about our jobs.
  int64_t poll_interval_ms = 1000;
  // Pool name -> partition name, and per-partition overrides.
  std::map<std::string, std::string> partitions;
  std::map<std::string, PartitionOverride> partition_overrides;

  std::string PartitionOf(const std::string& pool) const;
  std::string SlotTypeOf(const std::string& partition) const;
};

// True when `resource_manager` names type slurm.
bool IsSlurm(const nlohmann::json& resource_manager);

// Parses the slurm-specific keys of `resource_manager` and the partitions of `resource_pools`.
// Returns `resource_manager` with those keys removed in `*rest`, for the shared pool parser.
Result<SlurmConfig> ParseSlurmConfig(const nlohmann::json& resource_manager,
                                     const nlohmann::json& resource_pools, nlohmann::json* rest,
                                     nlohmann::json* pools_rest);

}  // namespace det::master::slurm
