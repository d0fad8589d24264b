#pragma once
// Workspace-resource pool bindings (Determined's rp_workspace_bindings), as pure rules: a pool
// bound to some workspaces is available to those alone, an unbound pool to every workspace,
// and the cluster's default pools cannot be bound (so a request that names no pool always has
// one). A workspace may name its own default compute and auxiliary pools among those
// available to it.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/scheduler/pool_config.h"

namespace det::master::scheduler {

// Pool name -> the workspaces it is bound to (no entry: unbound).
using PoolBindings = std::map<std::string, std::set<int64_t>>;

// The pools available to `workspace_id`, in the order the master's config lists them.
std::vector<std::string> PoolsAvailableTo(const ResourcePoolsConfig& config,
                                          const PoolBindings& bindings, int64_t workspace_id);

bool PoolAvailableTo(const PoolBindings& bindings, const std::string& pool, int64_t workspace_id);

// A workspace's own default pools ("" : the cluster's).
struct WorkspacePools {
  int64_t workspace_id = 1;
  std::string default_compute_pool;
  std::string default_aux_pool;
};

// The pool a request of `slots` slots in the workspace runs in: `requested`, else the
// workspace's default (auxiliary for 0 slots, compute otherwise), else the cluster's. An
// existing pool that is not available to the workspace is refused with Determined's words;
// a pool that does not exist is left to the caller's check (its own message).
Result<std::string> ResolvePoolForWorkspace(const ResourcePoolsConfig& config,
                                            const PoolBindings& bindings,
                                            const WorkspacePools& workspace,
                                            const std::string& requested, int64_t slots);

// Whether `pool` may get bindings: it exists and is not one of the cluster's defaults.
Status CheckBindablePool(const ResourcePoolsConfig& config, const std::string& pool);

// Whether `pool` may be a default of the workspace ("" always may).
Status CheckWorkspaceDefaultPool(const ResourcePoolsConfig& config, const PoolBindings& bindings,
                                 int64_t workspace_id, const std::string& pool);

}  // namespace det::master::scheduler
