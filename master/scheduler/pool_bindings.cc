#include "master/scheduler/pool_bindings.h"

namespace det::master::scheduler {

bool PoolAvailableTo(const PoolBindings& bindings, const std::string& pool, int64_t workspace_id) {
  auto it = bindings.find(pool);
  return it == bindings.end() || it->second.empty() || it->second.count(workspace_id) > 0;
}

std::vector<std::string> PoolsAvailableTo(const ResourcePoolsConfig& config,
                                          const PoolBindings& bindings, int64_t workspace_id) {
  std::vector<std::string> out;
  for (const PoolConfig& p : config.pools) {
    if (PoolAvailableTo(bindings, p.pool_name, workspace_id)) out.push_back(p.pool_name);
  }
  return out;
}

Result<std::string> ResolvePoolForWorkspace(const ResourcePoolsConfig& config,
                                            const PoolBindings& bindings,
                                            const WorkspacePools& workspace,
                                            const std::string& requested, int64_t slots) {
  std::string pool = requested;
  if (pool.empty()) {
    pool = slots == 0 ? workspace.default_aux_pool : workspace.default_compute_pool;
  }
  if (pool.empty()) return slots == 0 ? config.default_aux_pool : config.default_compute_pool;
  if (config.Find(pool) != nullptr && !PoolAvailableTo(bindings, pool, workspace.workspace_id)) {
    return FailedPrecondition("resource pool " + pool +
                              " does not exist or is not available to workspace id " +
                              std::to_string(workspace.workspace_id));
  }
  return pool;
}

Status CheckBindablePool(const ResourcePoolsConfig& config, const std::string& pool) {
  if (pool == config.default_compute_pool || pool == config.default_aux_pool) {
    return InvalidArgument("default resource pool " + pool + " cannot be bound to any workspace");
  }
  if (config.Find(pool) == nullptr) return NotFound("pool with name " + pool + " doesn't exist");
  return Status::Ok();
}

Status CheckWorkspaceDefaultPool(const ResourcePoolsConfig& config, const PoolBindings& bindings,
                                 int64_t workspace_id, const std::string& pool) {
  if (pool.empty()) return Status::Ok();
  if (config.Find(pool) == nullptr || !PoolAvailableTo(bindings, pool, workspace_id)) {
    return FailedPrecondition(
        "unable to bind a resource pool that does not exist or is not available to the "
        "workspace: " +
        pool);
  }
  return Status::Ok();
}

}  // namespace det::master::scheduler
