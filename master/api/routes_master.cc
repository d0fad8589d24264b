// The master itself: GET /api/v1/master/config (secrets redacted) and GET /api/v1/master/logs
// (newline-delimited {"result": {"logEntry": ...}} as grpc-gateway streams; `follow` keeps the
// stream open for new lines).
#include "common/clock.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/core/cluster_message.h"
#include "master/core/secret_redact.h"
#include "master/server/cluster_message_service.h"
#include "master/server/db_config.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

// The effective master configuration in master.yaml's keys, as Determined's GetMasterConfig.
json MasterConfigJson(const server::MasterConfig& c) {
  json pools = json::array();
  for (const auto& p : c.pools.pools) {
    bool fair = p.scheduler.type == scheduler::SchedulerType::kFairShare;
    json sched = {
        {"type", fair ? "fair_share" : "priority"},
        {"fitting_policy",
         p.scheduler.fitting_policy == scheduler::FittingPolicy::kBest ? "best" : "worst"},
        {"allow_heterogeneous_fits", p.scheduler.allow_heterogeneous_fits}};
    if (!fair) {
      sched["preemption"] = p.scheduler.preemption;
      sched["priority"] = p.scheduler.default_priority;
    }
    pools.push_back({{"pool_name", p.pool_name},
                     {"description", p.description},
                     {"max_aux_containers_per_agent", p.max_aux_containers_per_agent},
                     {"scheduler", sched}});
  }
  json rm = c.resource_manager.is_object() ? c.resource_manager : json::object();
  if (!rm.contains("type")) rm["type"] = "agent";
  rm["default_compute_resource_pool"] = c.pools.default_compute_pool;
  rm["default_aux_resource_pool"] = c.pools.default_aux_pool;
  json security = json::object();
  if (c.initial_user_password) security["initial_user_password"] = *c.initial_user_password;
  json cfg = {{"port", c.port},
              {"bind_address", c.bind_address},
              {"data_dir", c.data_dir},
              {"db",
               {{"type", c.store},
                {"path", c.store == "postgres" ? server::RedactDbPassword(c.db_path) : c.db_path}}},
              {"cluster_name", c.cluster_name},
              {"security", security},
              {"checkpoint_storage", c.checkpoint_storage},
              {"agent_timeout", c.agent_timeout_seconds},
              {"task_container_defaults",
               c.task_container_defaults.is_null() ? json::object() : c.task_container_defaults},
              {"log", {{"level", c.log_level}}},
              {"resource_manager", rm},
              {"resource_pools", pools},
              // Determined's clients read these; none is switched on here.
              {"feature_switches", json::array()},
              // The signing key is a secret: only whether one is set is shown.
              {"webhooks",
               {{"base_url", c.webhooks_base_url},
                {"signing_key", c.webhooks_signing_key.empty() ? "" : "********"}}}};
  core::RedactSecrets(cfg);
  return cfg;
}

json LogEntryLine(const server::LogEntry& e) {
  json entry = {{"id", e.id},
                {"timestamp", FormatRfc3339(e.timestamp)},
                {"level", e.level},
                {"message", e.message}};
  return json{{"result", {{"logEntry", entry}}}};
}

}  // namespace

void RegisterMasterRoutes(server::Router* router, server::Master* master) {
  // The cluster-wide message: admins set, see (scheduled ones too) and clear it; every user sees
  // the active one in the master's info (routes_auth.cc).
  router->Add("GET", "/api/v1/master/cluster_message",
              WithAuth(master, AdminOnly(), [master](HttpRequest&, const Principal&) {
                std::optional<store::ClusterMessageRow> m = master->cluster_message()->Current();
                return JsonResponse(
                    {{"clusterMessage", m ? core::ClusterMessageJson(*m) : json(nullptr)}});
              }));
  router->Add("PUT", "/api/v1/master/cluster_message",
              WithAuth(master, AdminOnly(), [master](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                Status st = master->cluster_message()->Set(*body);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));
  router->Add("DELETE", "/api/v1/master/cluster_message",
              WithAuth(master, AdminOnly(), [master](HttpRequest&, const Principal&) {
                Status st = master->cluster_message()->Clear();
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

  router->Add("GET", "/api/v1/master/config",
              WithAuth(master, AdminOnly(), [master](HttpRequest&, const Principal&) {
                return JsonResponse({{"config", MasterConfigJson(master->config())}});
              }));

  router->Add(
      "GET", "/api/v1/master/logs",
      WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) -> HttpResponse {
        bool follow = QueryBool(req, "follow", false);
        Result<int64_t> offset = QueryInt(req, "offset", 0);
        if (!offset.ok()) return ErrorResponse(offset.status());
        Result<int64_t> limit = QueryInt(req, "limit", 0);
        if (!limit.ok()) return ErrorResponse(limit.status());
        if (*limit < 0) {
          return ErrorResponse(
              InvalidArgument("limit: must be >= 0 (got " + std::to_string(*limit) + ")"));
        }
        std::shared_ptr<server::LogBuffer> logs = master->log_buffer();
        // Offset >= 0 skips that many of the kept lines; a negative offset keeps the last -offset.
        std::vector<server::LogEntry> first;
        if (*offset < 0) {
          first = logs->Tail(static_cast<size_t>(-*offset));
        } else {
          first = logs->After(0);
          size_t skip = std::min(first.size(), static_cast<size_t>(*offset));
          first.erase(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(skip));
        }
        size_t max = static_cast<size_t>(*limit);
        if (max != 0 && first.size() > max) first.resize(max);
        // Following starts after the last line sent, or after the newest line kept now.
        int64_t last = 0;
        if (!first.empty()) {
          last = first.back().id;
        } else if (auto newest = logs->Tail(1); !newest.empty()) {
          last = newest.back().id;
        }
        HttpResponse resp;
        resp.content_type = "application/x-ndjson";
        auto rows = std::make_shared<std::vector<server::LogEntry>>(std::move(first));
        resp.stream = [logs, rows, follow, max, last](server::ResponseStream& out) mutable {
          size_t sent = 0;
          for (const auto& e : *rows) {
            if (!out.Write(LogEntryLine(e).dump() + "\n")) return;
            ++sent;
          }
          if (!follow) return;
          // Until the client goes away (a failed write) or the limit is reached. While idle,
          // Write("") checks every second that the client is still there, and a single space
          // every few seconds keeps proxies from timing the connection out; line-based JSON
          // readers take it as leading whitespace of the next line.
          int idle_seconds = 0;
          while (max == 0 || sent < max) {
            if (!logs->WaitAfter(last, 1000)) {
              if (!out.Write("")) return;
              if (++idle_seconds >= 5) {
                idle_seconds = 0;
                if (!out.Write(" ")) return;
              }
              continue;
            }
            idle_seconds = 0;
            for (const auto& e : logs->After(last)) {
              if (!out.Write(LogEntryLine(e).dump() + "\n")) return;
              last = e.id;
              if (max != 0 && ++sent >= max) return;
            }
          }
        };
        return resp;
      }));
}

}  // namespace det::master::api
