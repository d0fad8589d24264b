// det experiment continue / label add|remove / set max-slots|weight|priority|gc-policy /
// list-trials / list-checkpoints.
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "cli/experiment_patch.h"
#include "cli/format.h"
#include "cli/paginate.h"
#include "cli/table.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

std::string ExperimentPath(int64_t id) { return "/api/v1/experiments/" + std::to_string(id); }

Status Patch(Session& session, int64_t id, const json& body) {
  return session.Call("PATCH", ExperimentPath(id), body).status();
}

Status ChangeLabel(CliContext& ctx, int64_t id, const std::string& label, bool add) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json resp, session.Get(ExperimentPath(id)));
  std::optional<json> patch = LabelPatch(resp.value("experiment", json::object()), label, add);
  if (patch) DET_RETURN_IF_ERROR(Patch(session, id, *patch));
  Print(add ? "Added label '" + label + "' to experiment " + std::to_string(id) + "\n"
            : "Removed label '" + label + "' from experiment " + std::to_string(id) + "\n");
  return Status::Ok();
}

struct GcArgs {
  int64_t id = 0;
  GcPolicy policy;
  bool yes = false;
};

Status SetGcPolicy(CliContext& ctx, const GcArgs& args) {
  Session& session = ctx.GetSession();
  if (!args.yes) {
    DET_ASSIGN_OR_RETURN(json preview, session.Get(ExperimentPath(args.id) + "/preview_gc?" +
                                                   GcPolicyQuery(args.policy)));
    json checkpoints = preview.value("checkpoints", json::array());
    if (!checkpoints.is_array()) checkpoints = json::array();
    std::string metric = JsonString(preview, "metric_name");
    std::vector<TableRow> rows;
    for (const json& c : checkpoints) {
      json step = c.value("step", json());
      if (!step.is_object() || step.value("validation", json()).is_null()) continue;
      json vm = c.value("ValidationMetrics", json::object());
      TableCell metric_cell;
      if (vm.is_object() && vm.value("avgMetrics", json()).is_object() &&
          vm["avgMetrics"].contains(metric)) {
        metric_cell = JsonCell(vm["avgMetrics"][metric]);
      }
      std::string resources;
      json res = c.value("Resources", json::object());
      if (res.is_object()) {
        for (auto it = res.begin(); it != res.end(); ++it) {
          resources += (resources.empty() ? "" : "\n") + it.key();
        }
      }
      rows.push_back({JsonCell(c.value("TrialID", json())),
                      JsonCell(c.value("StepsCompleted", json())), JsonString(c, "State"),
                      metric_cell, JsonString(c, "UUID"), resources});
    }
    if (!rows.empty()) {
      Print("The following checkpoints with validation will be deleted by applying this GC "
            "Policy:\n");
      Print(RenderPresto({"Trial ID", "# of Batches", "State",
                          "Validation Metric\n(" + metric + ")", "UUID", "Resources"},
                         rows) +
            "\n");
    }
    Print("This policy will delete " + std::to_string(rows.size()) +
          " checkpoints with validations and " +
          std::to_string(checkpoints.size() - rows.size()) +
          " checkpoints without validations.\n");
    if (!AskYesOrNo("Changing the checkpoint garbage collection policy of an experiment may "
                    "result\nin the unrecoverable deletion of checkpoints.  Do you wish to "
                    "proceed?")) {
      Print("Aborting operations.\n");
      return Status::Ok();
    }
  }
  DET_RETURN_IF_ERROR(Patch(session, args.id, GcPolicyPatch(args.id, args.policy)));
  Print("Set GC policy of experiment " + std::to_string(args.id) + " to\n" +
        GcPolicyRepr(args.policy) + "\n");
  return Status::Ok();
}

struct ListTrialsArgs {
  int64_t id = 0;
  int64_t limit = 200;
  int64_t offset = 0;
  std::string pages = "all";
  bool csv = false;
};

Status ListTrials(CliContext& ctx, const ListTrialsArgs& args) {
  DET_ASSIGN_OR_RETURN(json trials,
                       FetchPages(ctx.GetSession(), ExperimentPath(args.id) + "/trials",
                                  "trials", args.offset, args.limit,
                                  args.pages == "all" ? -1 : 1));
  std::vector<std::string> headers = {"Trial ID", "State", "H-Params",
                                      "Started",  "Ended", "# of Batches"};
  std::vector<TableRow> rows;
  for (const json& t : trials) {
    rows.push_back({JsonCell(t.value("id", json())), StripStatePrefix(JsonString(t, "state")),
                    t.value("hparams", json::object()).dump(4),
                    FormatTime(t.value("startTime", json())),
                    FormatTime(t.value("endTime", json())),
                    JsonCell(t.value("totalBatchesProcessed", json(0)))});
  }
  Print(args.csv ? RenderCsv(headers, rows) : RenderPresto(headers, rows) + "\n");
  return Status::Ok();
}

// `set max-slots|weight|priority ID VALUE`.
void AddSetResource(CLI::App* set, CliContext& ctx, const std::string& name,
                    const std::string& key, const std::string& shown) {
  struct Args {
    int64_t id = 0;
    std::string value;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = set->add_subcommand(name, "set `" + shown + "` of experiment");
  cmd->add_option("EXPERIMENT_ID", args->id, "experiment ID to modify")->required();
  cmd->add_option("VALUE", args->value, shown == "max_slots" ? "max slots (or none)" : shown)
      ->required();
  cmd->callback([&ctx, args, key, shown] {
    json value;
    std::string text;
    if (shown == "max_slots") {
      Result<json> v = ParseNoneOrInt(args->value);
      if (!v.ok()) throw CLI::ValidationError("VALUE", v.status().message());
      value = *v;
      text = value.is_null() ? "None" : value.dump();
    } else if (shown == "weight") {
      try {
        size_t used = 0;
        double w = std::stod(args->value, &used);
        if (used != args->value.size()) throw std::invalid_argument("trailing");
        value = w;
        text = PythonFloat(w);
      } catch (const std::exception&) {
        throw CLI::ValidationError("VALUE", "invalid float value: '" + args->value + "'");
      }
    } else {
      try {
        size_t used = 0;
        long long p = std::stoll(args->value, &used);
        if (used != args->value.size()) throw std::invalid_argument("trailing");
        value = p;
        text = std::to_string(p);
      } catch (const std::exception&) {
        throw CLI::ValidationError("VALUE", "invalid int value: '" + args->value + "'");
      }
    }
    ctx.SetAction("set " + shown + " of experiment", [&ctx, args, key, shown, value, text] {
      DET_RETURN_IF_ERROR(
          Patch(ctx.GetSession(), args->id, ResourcesPatch(args->id, key, value)));
      Print("Set `" + shown + "` of experiment " + std::to_string(args->id) + " to " + text +
            "\n");
      return Status::Ok();
    });
  });
}

}  // namespace

void RegisterExperimentManageCommands(CLI::App* exp, CliContext& ctx) {
  // continue
  struct ContinueArgs {
    int64_t id = 0;
    std::string config_file;
    std::vector<std::string> overrides;
    bool follow = false;
  };
  auto cont = std::make_shared<ContinueArgs>();
  CLI::App* cont_cmd = exp->add_subcommand(
      "continue", "resume or recover training for a single-searcher experiment");
  cont_cmd->add_option("EXPERIMENT_ID", cont->id, "experiment ID to continue")->required();
  cont_cmd->add_option("--config-file", cont->config_file, "experiment config file (.yaml)");
  cont_cmd->add_flag("-f,--follow-first-trial", cont->follow,
                     "stream the logs of the first trial of the experiment");
  cont_cmd->add_option("--config", cont->overrides,
                       "override a config value, e.g. --config hyperparameters.lr=0.1 "
                       "(repeatable)")
      ->allow_extra_args(false);
  cont_cmd->callback([&ctx, cont] {
    ctx.SetAction("continue experiment", [&ctx, cont]() -> Status {
      std::optional<std::string> text;
      if (!cont->config_file.empty()) {
        std::ifstream in(cont->config_file, std::ios::binary);
        if (!in) return InvalidArgument("cannot read the config file " + cont->config_file);
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
      }
      DET_ASSIGN_OR_RETURN(json body, ContinueBody(cont->id, text, cont->overrides));
      DET_RETURN_IF_ERROR(
          ctx.GetSession().Post(ExperimentPath(cont->id) + "/continue", body).status());
      Print("Continued experiment " + std::to_string(cont->id) + "\n");
      if (cont->follow) return FollowFirstTrial(ctx.GetSession(), cont->id);
      return Status::Ok();
    });
  });

  // label add / remove
  CLI::App* label = exp->add_subcommand("label", "manage experiment labels");
  label->require_subcommand(1);
  for (bool add : {true, false}) {
    struct LabelArgs {
      int64_t id = 0;
      std::string label;
    };
    auto args = std::make_shared<LabelArgs>();
    CLI::App* cmd = label->add_subcommand(add ? "add" : "remove", add ? "add label" : "remove label");
    cmd->add_option("EXPERIMENT_ID", args->id, "experiment ID")->required();
    cmd->add_option("LABEL", args->label, "label")->required();
    cmd->callback([&ctx, args, add] {
      ctx.SetAction(add ? "add label" : "remove label",
                    [&ctx, args, add] { return ChangeLabel(ctx, args->id, args->label, add); });
    });
  }

  // set ...
  CLI::App* set = exp->add_subcommand("set", "set experiment attributes");
  set->require_subcommand(1);
  auto gc = std::make_shared<GcArgs>();
  CLI::App* gc_cmd = set->add_subcommand("gc-policy", "set experiment GC policy and run GC");
  gc_cmd->add_option("EXPERIMENT_ID", gc->id, "experiment ID to modify")->required();
  gc_cmd->add_option("--save-experiment-best", gc->policy.save_experiment_best,
                     "number of best checkpoints per experiment to save")
      ->required()
      ->check(NonNegativeInt());
  gc_cmd->add_option("--save-trial-best", gc->policy.save_trial_best,
                     "number of best checkpoints per trial to save")
      ->required()
      ->check(NonNegativeInt());
  gc_cmd->add_option("--save-trial-latest", gc->policy.save_trial_latest,
                     "number of latest checkpoints per trial to save")
      ->required()
      ->check(NonNegativeInt());
  gc_cmd->add_flag("--yes", gc->yes, "automatically answer yes to prompts");
  gc_cmd->callback([&ctx, gc] {
    ctx.SetAction("set GC policy", [&ctx, gc] { return SetGcPolicy(ctx, *gc); });
  });
  AddSetResource(set, ctx, "max-slots", "maxSlots", "max_slots");
  AddSetResource(set, ctx, "weight", "weight", "weight");
  AddSetResource(set, ctx, "priority", "priority", "priority");

  // list-trials
  auto lt = std::make_shared<ListTrialsArgs>();
  CLI::App* lt_cmd = exp->add_subcommand("list-trials", "list trials of experiment")->alias("lt");
  lt_cmd->add_option("EXPERIMENT_ID", lt->id, "experiment ID")->required();
  lt_cmd->add_option("--limit", lt->limit, "Maximum items per page of results (default 200)")
      ->check(PositiveInt());
  lt_cmd->add_option("--offset", lt->offset, "Number of items to skip")->check(NonNegativeInt());
  lt_cmd->add_option("--pages", lt->pages, "'all' (default) or '1'")
      ->check(CLI::IsMember({"all", "1"}));
  lt_cmd->add_flag("--csv", lt->csv, "print as CSV");
  lt_cmd->callback([&ctx, lt] {
    ctx.SetAction("list trials", [&ctx, lt] { return ListTrials(ctx, *lt); });
  });

  // list-checkpoints
  struct LcArgs {
    int64_t id = 0;
    int64_t best = -1;
    bool csv = false;
  };
  auto lc = std::make_shared<LcArgs>();
  CLI::App* lc_cmd =
      exp->add_subcommand("list-checkpoints", "list checkpoints of experiment")->alias("lc");
  lc_cmd->add_option("EXPERIMENT_ID", lc->id, "experiment ID")->required();
  lc_cmd->add_option("--best", lc->best,
                     "Return the best N checkpoints for this experiment. If this flag is used, "
                     "only checkpoints with an associated validation metric will be considered.")
      ->check(NonNegativeInt());
  lc_cmd->add_flag("--csv", lc->csv, "print as CSV");
  lc_cmd->callback([&ctx, lc] {
    ctx.SetAction("list checkpoints", [&ctx, lc] {
      std::optional<int64_t> best;
      if (lc->best >= 0) best = lc->best;
      return ListExperimentCheckpoints(ctx, lc->id, best, lc->csv);
    });
  });
}

}  // namespace det::cli
