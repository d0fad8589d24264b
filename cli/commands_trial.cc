// det trial logs / describe / kill.
#include <memory>
#include <vector>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/paginate.h"
#include "cli/table.h"
#include "cli/trial_logs.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

// Determined's v1LogLevel names, lowest first; --level L asks for L and above.
const std::vector<std::string> kLogLevels = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR",
                                             "CRITICAL"};

std::string MessageOf(const nlohmann::json& entry) {
  std::string msg = JsonString(entry, "message");
  if (msg.empty()) {
    msg = JsonString(entry, "log");
    if (!msg.empty() && msg.back() != '\n') msg.push_back('\n');
  }
  return msg;
}

struct DescribeArgs {
  int64_t trial_id = 0;
  bool json_out = false;
  bool csv = false;
  bool metrics = false;
  bool metrics_summary = false;
  int64_t limit = 1000;
  int64_t offset = 0;
  std::string pages = "all";
};

// Checkpoint columns of a workload row: state, uuid (COMPLETED/DELETED only), metadata.
void AddCheckpointCells(const nlohmann::json& w, TableRow& row) {
  auto it = w.find("checkpoint");
  if (it == w.end() || !it->is_object()) {
    row.insert(row.end(), {std::nullopt, std::nullopt, std::nullopt});
    return;
  }
  std::string state = JsonString(*it, "state");
  bool has_uuid = state == "STATE_COMPLETED" || state == "STATE_DELETED";
  row.push_back(StripStatePrefix(state));
  row.push_back(has_uuid ? TableCell(JsonString(*it, "uuid")) : TableCell());
  row.push_back(it->value("metadata", nlohmann::json()).dump(4));
}

Status DescribeTrial(CliContext& ctx, const DescribeArgs& args) {
  using json = nlohmann::json;
  Session& session = ctx.GetSession();
  std::string base = "/api/v1/trials/" + std::to_string(args.trial_id);
  DET_ASSIGN_OR_RETURN(json resp, session.Get(base));
  std::string wl_path = base + "/workloads";
  if (args.metrics) wl_path += "?includeBatchMetrics=true";
  DET_ASSIGN_OR_RETURN(json workloads,
                       FetchPages(session, wl_path, "workloads", args.offset, args.limit,
                                  args.pages == "all" ? -1 : 1));
  if (args.json_out) {
    resp["workloads"] = workloads;
    Print(resp.dump(2) + "\n");
    return Status::Ok();
  }
  auto render = [&](const std::vector<std::string>& h, const std::vector<TableRow>& r) {
    return args.csv ? RenderCsv(h, r) : RenderPresto(h, r) + "\n";
  };
  json t = resp.value("trial", json::object());
  Print(render({"Experiment ID", "State", "H-Params", "Summary Metrics", "Started", "Ended"},
               {{JsonCell(t.value("experimentId", json())), StripStatePrefix(JsonString(t, "state")),
                 t.value("hparams", json()).dump(4), t.value("summaryMetrics", json()).dump(4),
                 FormatTime(t.value("startTime", json())),
                 FormatTime(t.value("endTime", json()))}}));
  std::vector<std::string> headers = {"# of Batches",    "Report Time",
                                      "Checkpoint",      "Checkpoint UUID",
                                      "Checkpoint Metadata", "Validation Metrics"};
  if (args.metrics) headers.push_back("Workload Metrics");
  std::vector<TableRow> rows;
  for (const json& w : workloads) {
    const json* unpacked = nullptr;
    for (const char* kind : {"training", "validation", "checkpoint"}) {
      auto it = w.find(kind);
      if (it != w.end() && it->is_object()) {
        unpacked = &*it;
        break;
      }
    }
    if (unpacked == nullptr) continue;
    TableRow row = {JsonCell(unpacked->value("totalBatches", json())),
                    FormatTime(unpacked->value("endTime", json()))};
    AddCheckpointCells(w, row);
    auto v = w.find("validation");
    row.push_back(v != w.end() && v->is_object()
                      ? TableCell(v->value("metrics", json()).dump(4))
                      : TableCell());
    if (args.metrics) {
      auto tr = w.find("training");
      row.push_back(tr != w.end() && tr->is_object()
                        ? TableCell(tr->value("metrics", json()).dump(4))
                        : TableCell());
    }
    rows.push_back(std::move(row));
  }
  Print("\nWorkloads:\n");
  Print(render(headers, rows));
  if (args.metrics_summary) Print(t.value("summaryMetrics", json()).dump(4) + "\n");
  return Status::Ok();
}

// `base` with the query parts joined ("" parts skipped).
std::string WithQuery(const std::string& base, std::initializer_list<std::string> parts) {
  std::string q;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    q += (q.empty() ? "?" : "&") + p;
  }
  return base + q;
}

}  // namespace

void TrialLogFilterArgs::AddTo(CLI::App* cmd) {
  cmd->add_option("--agent-id", agent_ids, "agents to show logs from (repeat for multiple values)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--container-id", container_ids,
                  "containers to show logs from (repeat for multiple values)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--rank-id", rank_ids, "ranks to show logs from (repeat for multiple values)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--timestamp-before", timestamp_before,
                  "show logs only from before (RFC 3339 format), e.g. '2021-10-26T23:17:12Z'");
  cmd->add_option("--timestamp-after", timestamp_after,
                  "show logs only from after (RFC 3339 format), e.g. '2021-10-26T23:17:12Z'");
  std::vector<std::string> levels = {"UNSPECIFIED"};
  levels.insert(levels.end(), kLogLevels.begin(), kLogLevels.end());
  cmd->add_option("--level", level, "show logs with this level or higher")
      ->check(CLI::IsMember(levels));
  cmd->add_option("--source", sources, "sources to show logs from (repeat for multiple values)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--stdtype", stdtypes,
                  "output stream to show logs from (repeat for multiple values)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--json", json_out, "print the log entries as JSON");
}

void TrialLogFilterArgs::Finish(TrialLogOptions& options) const {
  std::string q;
  auto add = [&q](const std::string& name, const std::string& value) {
    q += (q.empty() ? "" : "&") + name + "=" + UrlEncode(value);
  };
  for (const auto& v : agent_ids) add("agentIds", v);
  for (const auto& v : container_ids) add("containerIds", v);
  for (int64_t v : rank_ids) add("rankIds", std::to_string(v));
  for (const auto& v : sources) add("sources", v);
  for (const auto& v : stdtypes) add("stdtypes", v);
  if (!timestamp_before.empty()) add("timestampBefore", timestamp_before);
  if (!timestamp_after.empty()) add("timestampAfter", timestamp_after);
  if (!level.empty()) {
    // As Determined's levels_at_or_above: UNSPECIFIED is the lowest.
    bool on = level == "UNSPECIFIED";
    if (on) add("levels", "LOG_LEVEL_UNSPECIFIED");
    for (const auto& l : kLogLevels) {
      if (l == level) on = true;
      if (on) add("levels", "LOG_LEVEL_" + l);
    }
  }
  options.filters = q;
  options.json_out = json_out;
}

Status PrintTrialLogs(Session& session, int64_t trial_id, const TrialLogOptions& options) {
  std::string base = "/api/v1/trials/" + std::to_string(trial_id) + "/logs";
  // Fail early (and re-authenticate if needed) with a plain request.
  DET_ASSIGN_OR_RETURN(nlohmann::json trial,
                       session.Get("/api/v1/trials/" + std::to_string(trial_id)));
  (void)trial;

  std::optional<int64_t> last_id;
  if (options.tail) {
    std::vector<nlohmann::json> entries;
    DET_RETURN_IF_ERROR(session.StreamResults(
        WithQuery(base, {"limit=" + std::to_string(*options.tail), "orderBy=ORDER_BY_DESC",
                         options.filters}),
        [&](const nlohmann::json& e) {
          entries.push_back(e);
          return true;
        }));
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      Print(options.json_out ? it->dump() + "\n" : MessageOf(*it));
      if (std::optional<int64_t> id = JsonInt(it->value("id", nlohmann::json()))) {
        if (!last_id || *id > *last_id) last_id = id;
      }
    }
    if (!options.follow) return Status::Ok();
  }

  std::string query;
  if (options.head && !options.follow) {
    query = "limit=" + std::to_string(*options.head) + "&orderBy=ORDER_BY_ASC";
  } else if (options.follow) {
    query = "follow=true";
    if (options.head) query += "&limit=" + std::to_string(*options.head);
  }
  std::string path = WithQuery(base, {query, options.filters});
  DET_RETURN_IF_ERROR(session.StreamResults(path, [&](const nlohmann::json& e) {
    // With --tail and -f the stream starts from the beginning: skip what was printed.
    if (last_id) {
      std::optional<int64_t> id = JsonInt(e.value("id", nlohmann::json()));
      if (id && *id <= *last_id) return true;
    }
    Print(options.json_out ? e.dump() + "\n" : MessageOf(e));
    return true;
  }));
  if (options.follow) {
    Print("Trial log stream ended. To reopen log stream, run: det trial logs -f " +
          std::to_string(trial_id) + "\n");
  }
  return Status::Ok();
}

void RegisterTrialCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* trial = app.add_subcommand("trial", "manage trials")->alias("t");
  trial->require_subcommand(1);

  struct LogsArgs {
    int64_t trial_id = 0;
    bool follow = false;
    int64_t head = -1;
    int64_t tail = -1;
    TrialLogFilterArgs filters;
  };
  auto args = std::make_shared<LogsArgs>();
  CLI::App* logs = trial->add_subcommand("logs", "print a trial's logs");
  logs->add_option("TRIAL_ID", args->trial_id, "the trial")->required();
  logs->add_flag("-f,--follow", args->follow, "keep printing new lines until the trial ends");
  logs->add_option("--head", args->head, "print only the first N lines")
      ->check(NonNegativeInt());
  logs->add_option("--tail", args->tail, "print only the last N lines")
      ->check(NonNegativeInt());
  args->filters.AddTo(logs);
  logs->callback([&ctx, args] {
    ctx.SetAction("get trial logs", [&ctx, args]() -> Status {
      TrialLogOptions options;
      args->filters.Finish(options);
      options.follow = args->follow;
      if (args->head >= 0) options.head = args->head;
      if (args->tail >= 0) options.tail = args->tail;
      if (options.head && options.tail) {
        return InvalidArgument("--head and --tail cannot be combined");
      }
      return PrintTrialLogs(ctx.GetSession(), args->trial_id, options);
    });
  });

  auto describe_args = std::make_shared<DescribeArgs>();
  CLI::App* describe = trial->add_subcommand("describe", "describe trial");
  describe->add_option("TRIAL_ID", describe_args->trial_id, "trial ID")->required();
  describe->add_flag("--metrics-summary", describe_args->metrics_summary,
                     "display summary of metrics (as JSON, after the tables)");
  describe->add_flag("--metrics", describe_args->metrics,
                     "display full metrics, such as batch metrics");
  CLI::Option* json_flag =
      describe->add_flag("--json", describe_args->json_out, "print the trial and its workloads as JSON");
  describe->add_flag("--csv", describe_args->csv, "print as CSV")->excludes(json_flag);
  describe->add_option("--limit", describe_args->limit,
                       "Maximum workloads per page of results (default 1000)")
      ->check(PositiveInt());
  describe->add_option("--offset", describe_args->offset, "Number of workloads to skip")
      ->check(NonNegativeInt());
  describe->add_option("--pages", describe_args->pages, "'all' (default) or '1'")
      ->check(CLI::IsMember({"all", "1"}));
  describe->callback([&ctx, describe_args] {
    ctx.SetAction("describe trial",
                  [&ctx, describe_args] { return DescribeTrial(ctx, *describe_args); });
  });

  auto kill_id = std::make_shared<int64_t>(0);
  CLI::App* kill = trial->add_subcommand("kill", "forcibly terminate a trial");
  kill->add_option("TRIAL_ID", *kill_id, "trial ID")->required();
  kill->callback([&ctx, kill_id] {
    ctx.SetAction("kill trial", [&ctx, kill_id]() -> Status {
      DET_RETURN_IF_ERROR(ctx.GetSession()
                              .Post("/api/v1/trials/" + std::to_string(*kill_id) + "/kill",
                                    nlohmann::json::object())
                              .status());
      Print("Killed trial " + std::to_string(*kill_id) + "\n");
      return Status::Ok();
    });
  });
  RegisterTrialDownloadCommand(trial, ctx);
}

}  // namespace det::cli
