// det slot list|ls [--json|--csv] (also plain `det slot`): every slot of every agent with the
// allocation and task holding it (GET /api/v1/agents and GET /api/v1/tasks), as Determined's
// CLI prints it (cli/slot_render.h).
#include <memory>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/slot_render.h"
#include "cli/table.h"

namespace det::cli {
namespace {

struct SlotListArgs {
  bool json = false;
  bool csv = false;
};

Status SlotList(CliContext& ctx, const SlotListArgs& args) {
  DET_ASSIGN_OR_RETURN(nlohmann::json tasks, ctx.GetSession().Get("/api/v1/tasks"));
  DET_ASSIGN_OR_RETURN(nlohmann::json agents, ctx.GetSession().Get("/api/v1/agents"));
  std::vector<SlotListRow> rows = SlotListRows(agents, tasks);
  if (args.json) {
    Print(SlotListJson(rows).dump(2) + "\n");
  } else if (args.csv) {
    Print(RenderCsv(SlotListHeaders(), SlotListTable(rows)));
  } else {
    Print(RenderPresto(SlotListHeaders(), SlotListTable(rows)) + "\n");
  }
  return Status::Ok();
}

}  // namespace

void RegisterSlotListCommand(CLI::App& slot, CliContext& ctx) {
  auto args = std::make_shared<SlotListArgs>();
  CLI::App* list = slot.add_subcommand("list", "list slots in cluster")->alias("ls");
  auto* j = list->add_flag("--json", args->json, "print as JSON");
  auto* c = list->add_flag("--csv", args->csv, "print as CSV");
  j->excludes(c);
  auto run = [&ctx, args] {
    ctx.SetAction("list slots", [&ctx, args] { return SlotList(ctx, *args); });
  };
  list->callback(run);
  // `det slot` alone lists, as Determined's (list is its default subcommand).
  slot.require_subcommand(0, 1);
  slot.callback([&slot, run] {
    if (slot.get_subcommands().empty()) run();
  });
}

}  // namespace det::cli
