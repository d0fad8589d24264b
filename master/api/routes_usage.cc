// Cluster usage, from the allocation usage records: GET /resources/allocation/allocations-csv,
// Determined's per-allocation report (served beside /api/v1, as Determined serves it), and GET
// /api/v1/resources/allocation/aggregated, its slot-seconds per day or month (usage_report.h).

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/clock.h"
#include "common/csv.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/api/usage_report.h"

namespace det::master::api {

using server::HttpRequest;
using server::Principal;

namespace {

// More rows than this is a period to split, not one answer held in memory.
constexpr int64_t kMaxUsageRows = 100000;

Result<int64_t> UsageTime(const HttpRequest& req, const char* name) {
  std::string raw = req.Query(name);
  if (raw.empty()) {
    return InvalidArgument(std::string(name) + ": required, a time such as 2024-01-02T15:04:05Z");
  }
  std::optional<int64_t> t = ParseRfc3339(raw);
  if (!t) {
    return InvalidArgument(std::string(name) + ": must be a time such as 2024-01-02T15:04:05Z (got '" +
                           raw + "')");
  }
  return *t;
}

// Seconds and hours as Go's %f prints them, "0.0" for none (Determined's report).
std::string Decimal(double v) {
  if (v == 0) return "0.0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

}  // namespace

void RegisterUsageRoutes(server::Router* router, server::Master* master) {
  router->Add(
      "GET", "/resources/allocation/allocations-csv",
      WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
        Result<int64_t> from = UsageTime(req, "timestamp_after");
        if (!from.ok()) return ErrorResponse(from.status());
        Result<int64_t> to = UsageTime(req, "timestamp_before");
        if (!to.ok()) return ErrorResponse(to.status());
        if (*from > *to) {
          return ErrorResponse(
              InvalidArgument("timestamp_after: must not be after timestamp_before"));
        }
        auto rows = master->allocations()->Usage(*from, *to, kMaxUsageRows + 1);
        if (!rows.ok()) return ErrorResponse(rows.status());
        if (static_cast<int64_t>(rows->size()) > kMaxUsageRows) {
          return ErrorResponse(InvalidArgument(
              "timestamp_after..timestamp_before: more than " + std::to_string(kMaxUsageRows) +
              " allocations ran in this period; ask for a shorter one"));
        }
        int64_t now = master->allocations()->NowMicros();
        std::string body = CsvRecord({"allocation_id", "task_type", "username", "workspace_name",
                                      "experiment_id", "slots", "start_time", "end_time",
                                      "imagepulling_time", "slot_hours", "resource_pool"});
        for (const store::AllocationUsageRow& u : *rows) {
          // Slot hours inside the period asked for, as Determined counts them.
          int64_t begin = std::max(u.start_time, *from);
          int64_t end = std::min(std::max(u.end_time.value_or(now), u.start_time), *to);
          double slot_hours =
              end > begin ? static_cast<double>(end - begin) / 3.6e9 * static_cast<double>(u.slots)
                          : 0;
          body += CsvRecord(
              {u.allocation_id, u.task_type, u.username, u.workspace_name,
               u.experiment_id ? std::optional(std::to_string(*u.experiment_id)) : std::nullopt,
               std::to_string(u.slots), FormatRfc3339(u.start_time),
               u.end_time ? std::optional(FormatRfc3339(*u.end_time)) : std::nullopt,
               Decimal(0), Decimal(slot_hours), u.resource_pool});
        }
        server::HttpResponse resp;
        resp.content_type = "text/csv";
        resp.body = std::move(body);
        return resp;
      }));

  router->Add(
      "GET", "/api/v1/resources/allocation/aggregated",
      WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
        std::string period = req.Query("period");
        UsagePeriod kind;
        if (period == "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY" || period == "1") {
          kind = UsagePeriod::kDaily;
        } else if (period == "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY" || period == "2") {
          kind = UsagePeriod::kMonthly;
        } else {
          return ErrorResponse(InvalidArgument(
              "period: must be RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY or "
              "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY (got '" +
              period + "')"));
        }
        auto entries = UsagePeriods(kind, req.Query("startDate", req.Query("start_date")),
                                    req.Query("endDate", req.Query("end_date")));
        if (!entries.ok()) return ErrorResponse(entries.status());
        auto rows = master->allocations()->Usage(entries->front().begin, entries->back().end - 1,
                                                 kMaxUsageRows + 1);
        if (!rows.ok()) return ErrorResponse(rows.status());
        if (static_cast<int64_t>(rows->size()) > kMaxUsageRows) {
          return ErrorResponse(InvalidArgument(
              "startDate..endDate: more than " + std::to_string(kMaxUsageRows) +
              " allocations ran in this span; ask for a shorter one"));
        }
        AddUsage(*rows, master->allocations()->NowMicros(), &*entries);
        nlohmann::json out = nlohmann::json::array();
        for (const UsageEntry& e : *entries) {
          out.push_back({{"periodStart", e.period_start},
                         {"period", kind == UsagePeriod::kDaily
                                        ? "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY"
                                        : "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY"},
                         {"seconds", e.seconds},
                         {"byUsername", e.by_username},
                         {"byExperimentLabel", nlohmann::json::object()},
                         {"byResourcePool", e.by_resource_pool}});
        }
        return JsonResponse({{"resourceEntries", out}});
      }));
}

}  // namespace det::master::api
