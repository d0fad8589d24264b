#include "master/api/log_stream.h"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/log_filter.h"
#include "master/api/route_helpers.h"

namespace det::master::api {

using nlohmann::json;

namespace {

constexpr int64_t kPage = 1000;

// Reads every line after `*last` in pages, handing each to `each` (false: stop); false when a
// read failed or `each` stopped.
bool ReadAll(const LogSource& source, int64_t* last,
             const std::function<bool(const store::TaskLogRow&)>& each, bool* any = nullptr) {
  while (true) {
    auto page = source.read(*last, kPage, false);
    if (!page.ok()) return false;
    for (const auto& r : *page) {
      *last = std::max(*last, r.id);
      if (!each(r)) return false;
    }
    if (any != nullptr && !page->empty()) *any = true;
    if (static_cast<int64_t>(page->size()) < kPage) return true;
  }
}

}  // namespace

server::HttpResponse StreamLogLines(LogSource source, server::HttpRequest& req) {
  bool follow = QueryBool(req, "follow", false);
  Result<int64_t> limit = QueryInt(req, "limit", 0);
  if (!limit.ok()) return ErrorResponse(limit.status());
  Result<std::optional<bool>> order = ParseOrderBy(req.Query("orderBy"));
  if (!order.ok()) return ErrorResponse(order.status());
  bool desc = order->value_or(false);
  // Filters (log_filter.h): with any, every log is read and the limit applies after them.
  Result<LogFilter> filter =
      ParseLogFilter([&req](const std::string& name) { return req.QueryAll(name); });
  if (!filter.ok()) return ErrorResponse(filter.status());
  auto first = source.read(0, filter->Empty() ? *limit : 0, desc);
  if (!first.ok()) return ErrorResponse(first.status());
  auto rows = std::make_shared<std::vector<store::TaskLogRow>>(std::move(first).value());
  int64_t seen = 0;
  for (const auto& r : *rows) seen = std::max(seen, r.id);
  if (!filter->Empty()) {
    std::erase_if(*rows, [&filter](const store::TaskLogRow& r) { return !filter->Matches(r); });
    if (*limit > 0 && static_cast<int64_t>(rows->size()) > *limit) rows->resize(*limit);
  }
  server::HttpResponse resp;
  resp.content_type = "application/x-ndjson";
  resp.stream = [source = std::move(source), follow, rows, desc, seen,
                 filter = *filter](server::ResponseStream& out) {
    int64_t last = seen;
    for (const auto& r : *rows) {
      if (!out.Write(json{{"result", TrialLogJson(r)}}.dump() + "\n")) return;
    }
    if (!follow || desc) return;
    // Follow until the task is finished and nothing more arrives.
    while (true) {
      bool finished = source.finished();
      bool any = false;
      bool open = ReadAll(
          source, &last,
          [&](const store::TaskLogRow& r) {
            return !filter.Matches(r) || out.Write(json{{"result", TrialLogJson(r)}}.dump() + "\n");
          },
          &any);
      if (!open || (finished && !any)) return;
      if (!any) {
        source.wait();
        if (!out.Write("")) return;
      }
    }
  };
  return resp;
}

server::HttpResponse StreamLogFields(LogSource source, server::HttpRequest& req,
                                     bool with_allocations) {
  bool follow = QueryBool(req, "follow", false);
  auto probe = source.read(0, 1, false);  // a missing task is an error answer, not a stream
  if (!probe.ok()) return ErrorResponse(probe.status());
  server::HttpResponse resp;
  resp.content_type = "application/x-ndjson";
  resp.stream = [source = std::move(source), follow, with_allocations](server::ResponseStream& out) {
    LogFields fields;
    int64_t last = 0;
    bool changed = false;
    auto add = [&](const store::TaskLogRow& r) {
      changed = fields.Add(r) || changed;
      return true;
    };
    bool finished = source.finished();
    if (!ReadAll(source, &last, add)) return;
    if (!out.Write(json{{"result", fields.ToJson(with_allocations)}}.dump() + "\n")) return;
    // Following: a new answer whenever a value appears, until the task ends.
    while (follow && !finished) {
      source.wait();
      finished = source.finished();
      changed = false;
      if (!ReadAll(source, &last, add)) return;
      std::string chunk =
          changed ? json{{"result", fields.ToJson(with_allocations)}}.dump() + "\n" : "";
      if (!out.Write(chunk)) return;
    }
  };
  return resp;
}

}  // namespace det::master::api
