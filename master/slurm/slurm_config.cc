#include "master/slurm/slurm_config.h"

#include <set>

namespace det::master::slurm {

using nlohmann::json;

namespace {

Status CheckSlotType(const std::string& field, const std::string& v) {
  if (v == "cpu" || v == "cuda" || v == "rocm") return Status::Ok();
  return InvalidArgument(field + ": must be cpu, cuda or rocm (got '" + v + "')");
}

Result<std::string> StringField(const json& obj, const std::string& key, const std::string& where) {
  const json& v = obj[key];
  if (!v.is_string()) {
    return InvalidArgument(where + "." + key + ": must be a string (got " + v.dump() + ")");
  }
  return v.get<std::string>();
}

}  // namespace

std::string SlurmConfig::PartitionOf(const std::string& pool) const {
  auto it = partitions.find(pool);
  return it == partitions.end() ? pool : it->second;
}

std::string SlurmConfig::SlotTypeOf(const std::string& partition) const {
  auto it = partition_overrides.find(partition);
  if (it != partition_overrides.end() && it->second.slot_type) return *it->second.slot_type;
  return slot_type;
}

bool IsSlurm(const json& resource_manager) {
  return resource_manager.is_object() && resource_manager.contains("type") &&
         resource_manager["type"].is_string() && resource_manager["type"] == "slurm";
}

Result<SlurmConfig> ParseSlurmConfig(const json& rm, const json& resource_pools, json* rest,
                                     json* pools_rest) {
  SlurmConfig c;
  *rest = rm;
  rest->erase("type");
  const std::string where = "resource_manager";
  for (const char* key : {"master_host", "slot_type", "job_storage_root", "path", "slurm_conf",
                          "agent_path", "python", "harness_path"}) {
    if (!rm.contains(key) || rm[key].is_null()) continue;
    DET_ASSIGN_OR_RETURN(std::string v, StringField(rm, key, where));
    std::string k = key;
    if (k == "master_host") c.master_host = v;
    if (k == "slot_type") c.slot_type = v;
    if (k == "job_storage_root") c.job_storage_root = v;
    if (k == "path") c.path = v;
    if (k == "slurm_conf") c.slurm_conf = v;
    if (k == "agent_path") c.agent_path = v;
    if (k == "python") c.python = v;
    if (k == "harness_path") c.harness_path = v;
    rest->erase(k);
  }
  DET_RETURN_IF_ERROR(CheckSlotType(where + ".slot_type", c.slot_type));
  for (const char* key : {"master_port", "poll_interval_ms"}) {
    if (!rm.contains(key) || rm[key].is_null()) continue;
    const json& v = rm[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
        (std::string(key) == "master_port" && v.get<int64_t>() > 65535)) {
      return InvalidArgument(where + "." + key + ": must be a non-negative integer" +
                             (std::string(key) == "master_port" ? " up to 65535" : "") + " (got " +
                             v.dump() + ")");
    }
    if (std::string(key) == "master_port") c.master_port = v.get<int>();
    if (std::string(key) == "poll_interval_ms") c.poll_interval_ms = std::max<int64_t>(100, v);
    rest->erase(key);
  }
  if (rm.contains("partition_overrides") && !rm["partition_overrides"].is_null()) {
    const json& po = rm["partition_overrides"];
    if (!po.is_object()) {
      return InvalidArgument(where + ".partition_overrides: must be a mapping of partition names");
    }
    for (const auto& [name, o] : po.items()) {
      std::string f = where + ".partition_overrides." + name;
      if (!o.is_object()) return InvalidArgument(f + ": must be a mapping");
      PartitionOverride ov;
      for (const auto& [k, v] : o.items()) {
        if (k != "slot_type") {
          return InvalidArgument(f + "." + k + ": unknown field (known: slot_type)");
        }
        DET_ASSIGN_OR_RETURN(std::string st, StringField(o, k, f));
        DET_RETURN_IF_ERROR(CheckSlotType(f + ".slot_type", st));
        ov.slot_type = st;
      }
      c.partition_overrides[name] = ov;
    }
    rest->erase("partition_overrides");
  }
  // Determined's dispatcher keys that mean nothing here are accepted and ignored.
  for (const char* key : {"host",
                          "port",
                          "protocol",
                          "auth_file",
                          "container_run_type",
                          "rendezvous_network_interface",
                          "proxy_network_interface",
                          "user_name",
                          "group_name",
                          "singularity_image_root",
                          "apptainer_image_root",
                          "ld_library_path",
                          "launcher_jvm_args",
                          "sudo_authorized",
                          "tres_supported",
                          "gres_supported",
                          "job_project_source",
                          "security",
                          "name",
                          "metadata",
                          "cluster_name"}) {
    rest->erase(key);
  }
  *pools_rest = resource_pools;
  if (resource_pools.is_array()) {
    for (size_t i = 0; i < resource_pools.size(); ++i) {
      const json& p = resource_pools[i];
      if (!p.is_object() || !p.contains("provider") || p["provider"].is_null()) continue;
      const json& prov = p["provider"];
      std::string f = "resource_pools[" + std::to_string(i) + "].provider";
      if (!prov.is_object() || prov.value("type", json()) != "hpc") {
        return InvalidArgument(f +
                               ": under the slurm resource manager only {type: hpc, "
                               "partition: NAME} is accepted (got " +
                               prov.dump() + ")");
      }
      if (!prov.contains("partition") || !prov["partition"].is_string() ||
          prov["partition"].get<std::string>().empty()) {
        return InvalidArgument(f + ".partition: must name a Slurm partition");
      }
      if (p.contains("pool_name") && p["pool_name"].is_string()) {
        c.partitions[p["pool_name"].get<std::string>()] = prov["partition"].get<std::string>();
      }
      (*pools_rest)[i].erase("provider");
    }
  }
  return c;
}

}  // namespace det::master::slurm
