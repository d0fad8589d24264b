#pragma once
// `det deploy local cluster-up --resource-manager slurm`: a one-node Slurm cluster under the data
// dir from Debian's packages (munge with its own key and socket, slurmctld, slurmd on
// 127.0.0.1 with free ports, state/spool/logs under <data-dir>/slurm), then a master configured
// with the Slurm resource manager. cluster-down stops the daemons after the master.

#include <string>

#include "cli/deploy_local.h"
#include "common/status.h"

namespace det::cli {

// slurm.conf for one node `node_name` with `cpus` CPUs, daemons on `ctld_port`/`slurmd_port`,
// every path under `slurm_dir`, munge's socket `munge_socket`, and the partitions `partitions`
// (the first is the default). Pure; running as root it names root as SlurmUser.
std::string LocalSlurmConf(const std::string& slurm_dir, const std::string& munge_socket,
                           const std::string& node_name, int cpus, int ctld_port, int slurmd_port,
                           const std::vector<std::string>& partitions, const std::string& user);

// The master config that points the master at the local Slurm (pools = partitions).
std::string LocalSlurmMasterConfig(const std::string& slurm_conf,
                                   const std::vector<std::string>& partitions);

// Starts munged, slurmctld and slurmd (each its own pid file in `dir`) and waits until the node
// is idle. Returns the slurm.conf path.
Result<std::string> LocalSlurmUp(const std::string& dir);
// Cancels every job of the local Slurm in `dir` and waits (up to 20 s) until none is left.
void LocalSlurmCancelJobs(const std::string& dir);
// The daemon names LocalSlurmUp records pid files for, in stop order.
std::vector<std::string> LocalSlurmDaemons();

}  // namespace det::cli
