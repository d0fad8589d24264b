// det job list / update / update-batch.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "cli/yaml_render.h"
#include "cli/job_render.h"
#include "cli/job_update_parse.h"
#include "cli/paginate.h"
#include "cli/table.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

struct ListArgs {
  std::string pool;
  int64_t limit = 100;
  int64_t offset = 0;
  std::string pages = "all";
  bool reverse = false;
  bool json_out = false;
  bool csv = false;
  bool yaml = false;   // --yaml: the --json document as YAML
  bool table = false;  // --table: the default
};

Status ListJobs(CliContext& ctx, const ListArgs& args) {
  Session& session = ctx.GetSession();
  std::optional<std::string> pool;
  if (!args.pool.empty()) pool = args.pool;
  DET_ASSIGN_OR_RETURN(json pools, session.Get("/api/v1/resource-pools"));
  DET_ASSIGN_OR_RETURN(bool is_priority, IsPriorityPool(pools, pool));
  int64_t max_pages = -1;
  if (args.pages != "all") {
    if (args.pages != "1") {
      return InvalidArgument("--pages must be 'all' or '1', not '" + args.pages + "'");
    }
    max_pages = 1;
  }
  std::string path = "/api/v1/job-queues-v2?";
  if (pool) path += "resourcePool=" + UrlEncode(*pool) + "&";
  path += std::string("orderBy=") + (args.reverse ? "ORDER_BY_DESC" : "ORDER_BY_ASC");
  DET_ASSIGN_OR_RETURN(json wrapped,
                       FetchPages(session, path, "jobs", args.offset, args.limit, max_pages));
  json jobs = UnpackJobs(wrapped);
  if (args.json_out || args.yaml) {
    for (json& j : jobs) j.erase("limited");
    json doc = {{"jobs", jobs}};
    Print(args.yaml ? RenderYaml(doc) : doc.dump(2) + "\n");
    return Status::Ok();
  }
  std::vector<std::string> headers = JobListHeaders(is_priority);
  std::vector<TableRow> rows = JobListRows(jobs, is_priority);
  Print(args.csv ? RenderCsv(headers, rows) : RenderPresto(headers, rows) + "\n");
  return Status::Ok();
}

Status SendJobUpdates(Session& session, const std::vector<json>& updates) {
  for (const json& u : updates) {
    DET_RETURN_IF_ERROR(
        session.Post("/api/v1/job-queues", json{{"updates", json::array({u})}}).status());
  }
  return Status::Ok();
}

}  // namespace

void RegisterJobCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* job = app.add_subcommand("job", "manage jobs")->alias("j");
  job->require_subcommand(1);

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = job->add_subcommand("list", "list jobs")->alias("ls");
  list->add_option("-p,--resource-pool", list_args->pool, "The target resource pool, if any.");
  list->add_option("--limit", list_args->limit, "Maximum items per page of results (default 100)")
      ->check(PositiveInt());
  list->add_option("--offset", list_args->offset,
                   "Number of items to skip before starting page of results")
      ->check(NonNegativeInt());
  list->add_option("--pages", list_args->pages,
                   "when set to 'all' (default), fetch all available data; when '1', fetch a "
                   "single page")
      ->check(CLI::IsMember({"all", "1"}));
  list->add_flag("--reverse", list_args->reverse, "reverse the order of results");
  CLI::Option* json_flag = list->add_flag("--json", list_args->json_out, "print as JSON");
  CLI::Option* csv_flag =
      list->add_flag("--csv", list_args->csv, "print as CSV")->excludes(json_flag);
  CLI::Option* yaml_flag = list->add_flag("--yaml", list_args->yaml, "print as YAML")
                               ->excludes(json_flag)
                               ->excludes(csv_flag);
  list->add_flag("--table", list_args->table, "print as a table (the default)")
      ->excludes(json_flag)
      ->excludes(csv_flag)
      ->excludes(yaml_flag);
  list->callback([&ctx, list_args] {
    ctx.SetAction("list jobs", [&ctx, list_args] { return ListJobs(ctx, *list_args); });
  });

  struct UpdateArgs {
    std::string job_id;
    JobUpdateFlags flags;
    json update;
  };
  auto up = std::make_shared<UpdateArgs>();
  CLI::App* update = job->add_subcommand("update", "update job")->alias("u");
  update->add_option("JOB_ID", up->job_id, "The target job ID")->required();
  update->add_option("-p,--priority", up->flags.priority,
                     "The new priority. Exclusive to priority scheduler.");
  update->add_option("-w,--weight", up->flags.weight,
                     "The new weight. Exclusive to fair_share scheduler.");
  update->add_option("--resource-pool", up->flags.resource_pool,
                     "The target resource pool to move the job to.");
  update->add_option("--ahead-of", up->flags.ahead_of,
                     "The job ID of the job to be put ahead of in the queue (priority "
                     "scheduler only).");
  update->add_option("--behind-of", up->flags.behind_of,
                     "The job ID of the job to be put behind in the queue (priority scheduler "
                     "only).");
  update->callback([&ctx, up] {
    Result<json> u = BuildJobUpdate(up->job_id, up->flags);
    if (!u.ok()) throw CLI::ValidationError("update", u.status().message());
    up->update = *u;
    ctx.SetAction("update job", [&ctx, up] { return SendJobUpdates(ctx.GetSession(), {up->update}); });
  });

  struct BatchArgs {
    std::vector<std::string> items;
    std::vector<json> updates;
  };
  auto batch = std::make_shared<BatchArgs>();
  CLI::App* update_batch = job->add_subcommand("update-batch", "batch update jobs");
  update_batch
      ->add_option("OPERATION", batch->items,
                   "The target job ID(s) and target operation(s), formatted as "
                   "<jobID>.<operation>=<value>. Operations include priority, weight, "
                   "resource-pool, ahead-of, and behind-of.")
      ->required();
  update_batch->callback([&ctx, batch] {
    // Every item is checked before anything is sent; then one request per item, in order.
    batch->updates.clear();
    for (const std::string& item : batch->items) {
      Result<json> u = ParseBatchJobUpdate(item);
      if (!u.ok()) throw CLI::ValidationError("OPERATION", u.status().message());
      batch->updates.push_back(*u);
    }
    ctx.SetAction("update jobs",
                  [&ctx, batch] { return SendJobUpdates(ctx.GetSession(), batch->updates); });
  });
}

}  // namespace det::cli
