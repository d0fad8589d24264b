// det trial logs / describe.
#include <memory>
#include <vector>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/trial_logs.h"

namespace det::cli {
namespace {

std::string MessageOf(const nlohmann::json& entry) {
  std::string msg = JsonString(entry, "message");
  if (msg.empty()) {
    msg = JsonString(entry, "log");
    if (!msg.empty() && msg.back() != '\n') msg.push_back('\n');
  }
  return msg;
}

}  // namespace

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
        base + "?limit=" + std::to_string(*options.tail) + "&orderBy=ORDER_BY_DESC",
        [&](const nlohmann::json& e) {
          entries.push_back(e);
          return true;
        }));
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      Print(MessageOf(*it));
      if (std::optional<int64_t> id = JsonInt(it->value("id", nlohmann::json()))) {
        if (!last_id || *id > *last_id) last_id = id;
      }
    }
    if (!options.follow) return Status::Ok();
  }

  std::string query;
  if (options.head && !options.follow) {
    query = "?limit=" + std::to_string(*options.head) + "&orderBy=ORDER_BY_ASC";
  } else if (options.follow) {
    query = "?follow=true";
    if (options.head) query += "&limit=" + std::to_string(*options.head);
  }
  DET_RETURN_IF_ERROR(session.StreamResults(base + query, [&](const nlohmann::json& e) {
    // With --tail and -f the stream starts from the beginning: skip what was printed.
    if (last_id) {
      std::optional<int64_t> id = JsonInt(e.value("id", nlohmann::json()));
      if (id && *id <= *last_id) return true;
    }
    Print(MessageOf(e));
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
  };
  auto args = std::make_shared<LogsArgs>();
  CLI::App* logs = trial->add_subcommand("logs", "print a trial's logs");
  logs->add_option("TRIAL_ID", args->trial_id, "the trial")->required();
  logs->add_flag("-f,--follow", args->follow, "keep printing new lines until the trial ends");
  logs->add_option("--head", args->head, "print only the first N lines")
      ->check(NonNegativeInt());
  logs->add_option("--tail", args->tail, "print only the last N lines")
      ->check(NonNegativeInt());
  logs->callback([&ctx, args] {
    ctx.SetAction("get trial logs", [&ctx, args]() -> Status {
      TrialLogOptions options;
      options.follow = args->follow;
      if (args->head >= 0) options.head = args->head;
      if (args->tail >= 0) options.tail = args->tail;
      if (options.head && options.tail) {
        return InvalidArgument("--head and --tail cannot be combined");
      }
      return PrintTrialLogs(ctx.GetSession(), args->trial_id, options);
    });
  });
}

}  // namespace det::cli
