#include "master/api/json_views.h"

#include "common/clock.h"
#include "common/version.h"
#include "master/core/secret_redact.h"

namespace det::master::api {

using nlohmann::json;

namespace {

json OptTime(std::optional<int64_t> micros) {
  if (!micros) return nullptr;
  return FormatRfc3339(*micros);
}

// The metrics payload of a stored row, as reported.
json AvgMetrics(const store::MetricRow& m) {
  if (m.metrics.contains("validation_metrics")) return m.metrics["validation_metrics"];
  return m.metrics.value("avg_metrics", json::object());
}

}  // namespace

std::string TimeOrNull(std::optional<int64_t> micros) {
  return micros ? FormatRfc3339(*micros) : "";
}

json ExperimentJson(const server::ExperimentView& v, const json& master_task_defaults) {
  const store::ExperimentRow& r = v.row;
  const json& cfg = r.config;
  json labels = cfg.value("labels", json::array());
  if (!labels.is_array()) labels = json::array();
  std::string pool;
  if (cfg.contains("resources") && cfg["resources"].is_object()) {
    pool = cfg["resources"].value("resource_pool", "");
  }
  if (pool.empty()) pool = "default";
  std::string searcher_type;
  if (cfg.contains("searcher") && cfg["searcher"].is_object()) {
    searcher_type = cfg["searcher"].value("name", "");
  }
  return json{{"id", r.id},
              {"name", cfg.value("name", "")},
              {"description", cfg.value("description", "")},
              {"labels", labels},
              {"state", v.presented_state},
              {"archived", r.archived},
              {"config", core::ShownConfig(cfg, master_task_defaults)},
              {"originalConfig", r.original_config},
              {"numTrials", v.num_trials},
              {"progress", r.progress},
              {"startTime", FormatRfc3339(r.start_time)},
              {"endTime", OptTime(r.end_time)},
              {"username", v.username},
              {"displayName", v.username},
              {"userId", r.owner_id},
              {"jobId", r.job_id},
              {"projectId", 1},
              {"projectOwnerId", 1},
              {"workspaceId", 1},
              {"workspaceName", "Uncategorized"},
              {"projectName", "Uncategorized"},
              {"searcherType", searcher_type},
              {"resourcePool", pool},
              {"parentId", r.parent_id ? json(*r.parent_id) : json(nullptr)},
              {"notes", r.notes},
              {"forkedFrom", r.parent_id ? json(*r.parent_id) : json(nullptr)},
              {"unmanaged", v.unmanaged},
              {"externalExperimentId",
               v.external_experiment_id ? json(*v.external_experiment_id) : json(nullptr)}};
}

json MetricsJson(const store::MetricRow& m) {
  json metrics = {{"avgMetrics", AvgMetrics(m)}};
  if (m.metrics.contains("batch_metrics")) metrics["batchMetrics"] = m.metrics["batch_metrics"];
  return json{{"trialId", m.trial_id},
              {"trialRunId", m.trial_run_id},
              {"stepsCompleted", m.total_batches},
              {"totalBatches", m.total_batches},
              {"group", m.group},
              {"metrics", metrics},
              {"reportTime", FormatRfc3339(m.report_time)},
              {"endTime", FormatRfc3339(m.report_time)}};
}

json TrialJson(const server::TrialView& v) {
  const store::TrialRow& r = v.row;
  auto validation = [](const std::optional<store::MetricRow>& m) -> json {
    if (!m) return nullptr;
    return json{{"totalBatches", m->total_batches},
                {"endTime", FormatRfc3339(m->report_time)},
                {"metrics", {{"avgMetrics", AvgMetrics(*m)}}},
                {"numInputs", 0}};
  };
  json best_ckpt = nullptr;
  if (v.best_checkpoint) {
    best_ckpt = {{"uuid", v.best_checkpoint->uuid},
                 {"totalBatches", v.best_checkpoint->steps_completed},
                 {"state", "STATE_" + v.best_checkpoint->state},
                 {"endTime", FormatRfc3339(v.best_checkpoint->report_time)}};
  }
  int64_t wall = (r.end_time.value_or(r.start_time) - r.start_time) / 1000000;
  return json{
      {"id", r.id},
      {"experimentId", r.experiment_id},
      {"state", v.presented_state},
      {"hparams", r.hparams},
      {"restarts", r.restarts},
      {"startTime", FormatRfc3339(r.start_time)},
      {"endTime", r.end_time ? json(FormatRfc3339(*r.end_time)) : json(nullptr)},
      {"totalBatchesProcessed", r.total_batches},
      {"bestValidation", validation(v.best_validation)},
      {"latestValidation", validation(v.latest_validation)},
      {"bestCheckpoint", best_ckpt},
      {"runnerState", r.runner_state},
      {"taskId", v.task_ids.empty() ? r.task_id : v.task_ids.back()},
      {"taskIds", v.task_ids},
      {"wallClockTime", static_cast<double>(wall)},
      {"searcherMetricValue", r.searcher_metric ? json(*r.searcher_metric) : json(nullptr)},
      {"summaryMetrics", v.summary_metrics},
      {"checkpointCount", v.checkpoint_count},
      {"totalCheckpointSize", std::to_string(v.total_checkpoint_size)},  // uint64: a string
      {"warmStartCheckpointUuid",
       r.warm_start_checkpoint_uuid.empty() ? json(nullptr) : json(r.warm_start_checkpoint_uuid)},
      {"metadata", r.metadata}};
}

json CheckpointJson(const store::CheckpointRow& c, const json& training) {
  json resources = json::object();
  if (c.resources.is_object()) {
    for (auto& [k, v] : c.resources.items()) {
      resources[k] = v.is_string() ? v : json(v.dump());
    }
  }
  return json{{"uuid", c.uuid},
              {"taskId", c.task_id},
              {"allocationId", c.allocation_id},
              {"reportTime", FormatRfc3339(c.report_time)},
              {"resources", resources},
              {"metadata", c.metadata},
              {"state", "STATE_" + c.state},
              {"training", training},
              {"storageId", nullptr}};
}

json TrialLogJson(const store::TaskLogRow& r) {
  std::string ts = FormatRfc3339(r.timestamp);
  std::string container = r.container_id.substr(0, 8);
  container.resize(8, ' ');
  std::string message = "[" + ts + "] " + container;
  if (r.rank_id) message += " [rank=" + std::to_string(*r.rank_id) + "]";
  message += " || ";
  std::string level_name;
  if (r.level.rfind("LOG_LEVEL_", 0) == 0) level_name = r.level.substr(10);
  if (!level_name.empty()) message += level_name + ": ";
  message += r.log;
  if (message.empty() || message.back() != '\n') message += "\n";
  return json{{"id", std::to_string(r.id)},
              {"trialId", r.trial_id},
              {"taskId", r.task_id},
              {"timestamp", ts},
              {"level", r.level.empty() ? "LOG_LEVEL_INFO" : r.level},
              {"message", message},
              {"log", r.log},
              {"stdtype", r.stdtype},
              {"source", r.source},
              {"agentId", r.agent_id},
              {"containerId", r.container_id},
              {"allocationId", r.allocation_id},
              {"rankId", r.rank_id ? json(*r.rank_id) : json(nullptr)}};
}

json UserJson(const store::UserRow& u) {
  return json{{"id", u.id},
              {"username", u.username},
              {"admin", u.admin},
              {"active", u.active},
              {"displayName", u.display_name},
              {"remote", false}};
}

json SlotJson(const server::AgentView& a, const json& slot) {
  int id = slot.value("id", 0);
  std::string type = slot.value("type", "cpu");
  std::string enum_type = type == "cuda" ? "TYPE_CUDA" : type == "rocm" ? "TYPE_ROCM" : "TYPE_CPU";
  json device = {{"id", id},
                 {"brand", slot.value("brand", "")},
                 {"uuid", slot.value("uuid", "")},
                 {"type", enum_type}};
  json container = nullptr;
  auto it = a.slot_resources.find(id);
  if (it != a.slot_resources.end()) {
    container = {{"id", it->second},
                 {"parent", a.slot_allocations.at(id)},
                 {"state", "STATE_RUNNING"},
                 {"devices", json::array({device})}};
  }
  return json{{"id", std::to_string(id)},
              {"device", device},
              {"enabled", true},
              {"draining", false},
              {"container", container}};
}

json AgentJson(const server::AgentView& a) {
  json slots = json::object();
  json containers = json::object();
  // Determined's v1SlotStats: per device type and per brand, the slot count and the states of
  // the containers on them.
  json type_stats = json::object();
  json brand_stats = json::object();
  auto count = [](json& stats, const std::string& key, const json& container) {
    json& s = stats[key];
    if (s.is_null()) {
      s = {{"total", 0}, {"disabled", 0}, {"draining", 0}, {"states", json::object()}};
    }
    s["total"] = s["total"].get<int64_t>() + 1;
    if (!container.is_null()) {
      std::string state = container["state"].get<std::string>();
      s["states"][state] = s["states"].value(state, 0) + 1;
    }
  };
  for (const auto& s : a.slots) {
    json slot = SlotJson(a, s);
    const json& container = slot["container"];
    count(type_stats, slot["device"]["type"].get<std::string>(), container);
    count(brand_stats, slot["device"]["brand"].get<std::string>(), container);
    if (!container.is_null()) {
      std::string cid = container["id"].get<std::string>();
      if (containers.contains(cid)) {
        containers[cid]["devices"].push_back(slot["device"]);
      } else {
        containers[cid] = container;
      }
    }
    std::string slot_id = slot["id"].get<std::string>();
    slots[slot_id] = std::move(slot);
  }
  return json{{"id", a.id},
              {"version", kVersion},
              {"resourcePools", json::array({a.resource_pool})},
              {"resourcePool", a.resource_pool},
              {"slots", slots},
              {"containers", containers},
              {"slotStats", {{"typeStats", type_stats}, {"brandStats", brand_stats}}},
              {"registeredTime", FormatRfc3339(a.registered_time)},
              {"lastHeartbeat", FormatRfc3339(a.last_seen)},
              {"enabled", true},
              {"draining", false},
              {"connected", a.connected},
              {"addresses", json::array({a.hostname})},
              {"hostname", a.hostname},
              {"numContainers", static_cast<int64_t>(containers.size())}};
}

json PaginationJson(int64_t offset, int64_t limit, int64_t count, int64_t total) {
  return json{{"offset", offset},
              {"limit", limit},
              {"startIndex", std::min(offset, total)},
              {"endIndex", std::min(offset + count, total)},
              {"total", total}};
}

}  // namespace det::master::api
