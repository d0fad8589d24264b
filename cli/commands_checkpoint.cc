// det checkpoint list / describe / download / delete / rm, and `det experiment
// list-checkpoints`.
#include <cctype>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/checkpoint_download.h"
#include "cli/checkpoint_render.h"
#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/table.h"
#include "cli/trial_checkpoint_pick.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = text.find(',', start);
    out.push_back(text.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

Result<json> GetCheckpoint(Session& session, const std::string& uuid) {
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/checkpoints/" + UrlEncode(uuid)));
  json c = resp.value("checkpoint", json());
  if (!c.is_object()) return Internal("the master's answer holds no checkpoint");
  return c;
}

void RenderCheckpoint(const json& checkpoint, const std::optional<std::string>& path) {
  if (path) Print("Local checkpoint path:\n" + *path + " \n\n");
  Print(RenderPresto(CheckpointDescribeHeaders(), {CheckpointDescribeRow(checkpoint)}) + "\n");
}

// Asks `prompt [y/n]: ` on stdout until the answer is y/yes or n/no; end of input is no.
bool YesOrNo(const std::string& prompt) {
  for (;;) {
    Print(prompt + " [y/n]: ");
    std::string line;
    if (!std::getline(std::cin, line)) {
      Print("\n");
      return false;
    }
    std::string a;
    for (char c : line) {
      if (c != ' ' && c != '\t' && c != '\r') a.push_back(static_cast<char>(std::tolower(c)));
    }
    if (a == "y" || a == "yes") return true;
    if (a == "n" || a == "no") return false;
    Print("Please respond with 'y' or 'n'\n");
  }
}

}  // namespace

bool AskYesOrNo(const std::string& prompt) { return YesOrNo(prompt); }

Status ListExperimentCheckpoints(CliContext& ctx, int64_t experiment_id,
                                 std::optional<int64_t> best, bool csv) {
  std::string path = "/api/v1/experiments/" + std::to_string(experiment_id) +
                     "/checkpoints?sortByAttr=" +
                     (best ? "SORT_BY_SEARCHER_METRIC" : "SORT_BY_END_TIME");
  if (best) path += "&limit=" + std::to_string(*best);
  DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Get(path));
  json checkpoints = resp.value("checkpoints", json::array());
  std::vector<TableRow> rows = CheckpointListRows(checkpoints, csv);
  Print(csv ? RenderCsv(CheckpointListHeaders(), rows)
            : RenderPresto(CheckpointListHeaders(), rows) + "\n");
  return Status::Ok();
}

void RegisterCheckpointCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* ckpt = app.add_subcommand("checkpoint", "manage checkpoints")->alias("c");
  ckpt->require_subcommand(1);

  struct ListArgs {
    int64_t experiment_id = 0;
    int64_t best = -1;
    bool csv = false;
  };
  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = ckpt->add_subcommand("list", "list the checkpoints of an experiment")
                       ->alias("ls");
  list->add_option("EXPERIMENT_ID", list_args->experiment_id, "experiment ID")->required();
  list->add_option("--best", list_args->best,
                   "return the best N checkpoints (only checkpoints with a validation metric)")
      ->check(NonNegativeInt());
  list->add_flag("--csv", list_args->csv, "print as CSV");
  list->callback([&ctx, list_args] {
    ctx.SetAction("list checkpoints", [&ctx, list_args] {
      std::optional<int64_t> best;
      if (list_args->best >= 0) best = list_args->best;
      return ListExperimentCheckpoints(ctx, list_args->experiment_id, best, list_args->csv);
    });
  });

  struct DescribeArgs {
    std::string uuid;
    bool json_out = false;
  };
  auto describe_args = std::make_shared<DescribeArgs>();
  CLI::App* describe = ckpt->add_subcommand("describe", "describe checkpoint");
  describe->add_option("UUID", describe_args->uuid, "checkpoint uuid to describe")->required();
  describe->add_flag("--json", describe_args->json_out, "print the Checkpoint as JSON");
  describe->callback([&ctx, describe_args] {
    ctx.SetAction("describe checkpoint", [&ctx, describe_args]() -> Status {
      DET_ASSIGN_OR_RETURN(json c, GetCheckpoint(ctx.GetSession(), describe_args->uuid));
      if (describe_args->json_out) {
        Print(c.dump(2) + "\n");
      } else {
        RenderCheckpoint(c, std::nullopt);
      }
      return Status::Ok();
    });
  });

  struct DownloadArgs {
    std::string uuid;
    std::string output;
    bool quiet = false;
    std::string mode = "auto";
  };
  auto dl = std::make_shared<DownloadArgs>();
  CLI::App* download =
      ckpt->add_subcommand("download", "download checkpoint from persistent storage");
  download->add_option("UUID", dl->uuid, "Download a checkpoint by specifying its UUID.")
      ->required();
  download->add_option("-o,--output-dir", dl->output,
                       "Desired output directory for the checkpoint (default checkpoints/<uuid>)");
  download->add_flag("-q,--quiet", dl->quiet, "Only print the path to the checkpoint.");
  download->add_option("--mode", dl->mode,
                       "'direct' to download from checkpoint storage; 'master' to download via "
                       "the master; 'auto' (default) to try direct, then master")
      ->check(CLI::IsMember({"direct", "master", "auto"}));
  download->callback([&ctx, dl] {
    ctx.SetAction("download checkpoint", [&ctx, dl]() -> Status {
      DET_ASSIGN_OR_RETURN(DownloadMode mode, ParseDownloadMode(dl->mode));
      Session& session = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json c, GetCheckpoint(session, dl->uuid));
      std::optional<std::string> output;
      if (!dl->output.empty()) output = dl->output;
      DET_ASSIGN_OR_RETURN(std::string path, DownloadCheckpoint(session, c, output, mode));
      if (dl->quiet) {
        Print(path + "\n");
      } else {
        RenderCheckpoint(c, path);
      }
      return Status::Ok();
    });
  });

  struct DeleteArgs {
    std::string uuids;
    std::vector<std::string> globs;
    bool yes = false;
  };
  auto del = std::make_shared<DeleteArgs>();
  CLI::App* del_cmd = ckpt->add_subcommand("delete", "delete checkpoints");
  del_cmd->add_option("CHECKPOINT_UUIDS", del->uuids,
                      "comma-separated list of checkpoints to delete")
      ->required();
  del_cmd->add_flag("--yes", del->yes, "automatically answer yes to prompts");
  del_cmd->callback([&ctx, del] {
    ctx.SetAction("delete checkpoints", [&ctx, del]() -> Status {
      if (!del->yes &&
          !YesOrNo("Deleting checkpoints will result in deletion of all data associated\n"
                   "with each checkpoint in the checkpoint storage. Do you still want to "
                   "proceed?")) {
        Print("Stopping deletion of checkpoints.\n");
        return Status::Ok();
      }
      json body = {{"checkpointUuids", SplitCommas(del->uuids)}};
      DET_RETURN_IF_ERROR(
          ctx.GetSession().Call("DELETE", "/api/v1/checkpoints", body).status());
      Print("Deletion of checkpoints " + del->uuids + " is in progress\n");
      return Status::Ok();
    });
  });

  auto rm = std::make_shared<DeleteArgs>();
  CLI::App* rm_cmd = ckpt->add_subcommand("rm", "remove files from checkpoints");
  rm_cmd->add_option("CHECKPOINT_UUIDS", rm->uuids,
                     "comma-separated list of checkpoints to remove files from")
      ->required();
  rm_cmd->add_option("--glob", rm->globs,
                     "glob of the files to delete (repeatable); without any, no files are "
                     "deleted and the checkpoints' resources are read from storage and refreshed")
      ->allow_extra_args(false);
  rm_cmd->add_flag("--yes", rm->yes, "automatically answer yes to prompts");
  rm_cmd->callback([&ctx, rm] {
    ctx.SetAction("remove checkpoint files", [&ctx, rm]() -> Status {
      if (!rm->yes && !rm->globs.empty() &&
          !YesOrNo("All files matching specified globs will be deleted in all checkpoints "
                   "provided\nin checkpoint storage. Do you still want to proceed?")) {
        Print("Stopping removal of files from checkpoints.\n");
        return Status::Ok();
      }
      json body = {{"checkpointUuids", SplitCommas(rm->uuids)},
                   {"checkpointGlobs", rm->globs}};
      DET_RETURN_IF_ERROR(ctx.GetSession().Post("/api/v1/checkpoints/rm", body).status());
      if (rm->globs.empty()) {
        Print("No glob patterns provided, refreshing resources of checkpoints " + rm->uuids +
              " is in progress.\n");
      } else {
        Print("Removal of files from checkpoints " + rm->uuids + " is in progress.\n");
      }
      return Status::Ok();
    });
  });

  // add-metadata / remove-metadata: read the checkpoint's metadata, edit it, post it back
  // (POST /api/v1/checkpoints/{uuid}/metadata replaces it). steps_completed cannot be removed.
  struct MetadataArgs {
    std::string uuid;
    std::vector<std::string> items;
  };
  auto edit = [&ctx](const std::string& what, std::shared_ptr<MetadataArgs> args, bool add) {
    ctx.SetAction(what, [&ctx, args, add]() -> Status {
      DET_ASSIGN_OR_RETURN(json got, ctx.GetSession().Get("/api/v1/checkpoints/" + args->uuid));
      json metadata = got.value("checkpoint", json::object()).value("metadata", json::object());
      for (const std::string& item : args->items) {
        if (add) {
          size_t eq = item.find('=');
          if (eq == std::string::npos || eq == 0) {
            return InvalidArgument("KEY=VALUE: expected key=value (got '" + item + "')");
          }
          json value = json::parse(item.substr(eq + 1), nullptr, false);
          metadata[item.substr(0, eq)] = value.is_discarded() ? json(item.substr(eq + 1)) : value;
        } else {
          if (item == "steps_completed") {
            return InvalidArgument("KEY: steps_completed is required and cannot be removed");
          }
          metadata.erase(item);
        }
      }
      DET_RETURN_IF_ERROR(ctx.GetSession()
                              .Post("/api/v1/checkpoints/" + args->uuid + "/metadata",
                                    {{"checkpoint", {{"uuid", args->uuid}, {"metadata", metadata}}}})
                              .status());
      Print(metadata.dump(2) + "\n");
      return Status::Ok();
    });
  };
  auto add_md = std::make_shared<MetadataArgs>();
  CLI::App* add_cmd = ckpt->add_subcommand("add-metadata", "add or replace metadata keys");
  add_cmd->add_option("UUID", add_md->uuid, "the checkpoint")->required();
  add_cmd->add_option("KEY=VALUE", add_md->items, "a key and a JSON (or text) value")->required();
  add_cmd->callback([edit, add_md] { edit("add checkpoint metadata", add_md, true); });
  auto rm_md = std::make_shared<MetadataArgs>();
  CLI::App* rmmd_cmd = ckpt->add_subcommand("remove-metadata", "remove metadata keys");
  rmmd_cmd->add_option("UUID", rm_md->uuid, "the checkpoint")->required();
  rmmd_cmd->add_option("KEY", rm_md->items, "keys to remove")->required();
  rmmd_cmd->callback([edit, rm_md] { edit("remove checkpoint metadata", rm_md, false); });
}

void RegisterTrialDownloadCommand(CLI::App* trial, CliContext& ctx) {
  struct Args {
    int64_t trial_id = 0;
    bool best = false;
    bool latest = false;
    std::string uuid;
    std::string output;
    std::string sort_by;
    std::string smaller_is_better;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = trial->add_subcommand("download", "download checkpoint for trial");
  cmd->add_option("TRIAL_ID", args->trial_id, "trial ID")->required();
  CLI::Option* best = cmd->add_flag("--best", args->best,
                                    "download the checkpoint with the best validation metric");
  CLI::Option* latest =
      cmd->add_flag("--latest", args->latest, "download the most recent checkpoint");
  CLI::Option* uuid =
      cmd->add_option("--uuid", args->uuid, "download a checkpoint by specifying its UUID");
  best->excludes(latest)->excludes(uuid);
  latest->excludes(uuid);
  cmd->add_option("-o,--output-dir", args->output,
                  "Desired output directory for the checkpoint (default checkpoints/<uuid>)");
  cmd->add_option("--sort-by", args->sort_by,
                  "with --best: the validation metric to rank by (default: the searcher metric); "
                  "needs --smaller-is-better");
  cmd->add_option("--smaller-is-better", args->smaller_is_better,
                  "with --sort-by: whether smaller values of that metric are better")
      ->check(CLI::IsMember({"true", "false"}, CLI::ignore_case));
  cmd->add_flag("-q,--quiet", args->quiet, "only print the path to the checkpoint");
  cmd->callback([&ctx, args] {
    ctx.SetAction("download trial checkpoint", [&ctx, args]() -> Status {
      if (!args->best && !args->latest && args->uuid.empty()) {
        return InvalidArgument("one of --best, --latest or --uuid is required");
      }
      Session& session = ctx.GetSession();
      json c;
      if (!args->uuid.empty()) {
        DET_ASSIGN_OR_RETURN(c, GetCheckpoint(session, args->uuid));
      } else {
        TrialCheckpointPick pick;
        pick.latest = args->latest;
        pick.sort_by = args->sort_by;
        if (!args->smaller_is_better.empty()) {
          pick.smaller_is_better = args->smaller_is_better == "true" ||
                                   args->smaller_is_better == "True" ||
                                   args->smaller_is_better == "TRUE";
        }
        DET_ASSIGN_OR_RETURN(
            json resp, session.Get("/api/v1/trials/" + std::to_string(args->trial_id) +
                                   "/checkpoints?limit=100000"));
        DET_ASSIGN_OR_RETURN(c, PickTrialCheckpoint(resp.value("checkpoints", json()), pick));
      }
      std::optional<std::string> output;
      if (!args->output.empty()) output = args->output;
      DET_ASSIGN_OR_RETURN(std::string path,
                           DownloadCheckpoint(session, c, output, DownloadMode::kAuto));
      if (args->quiet) {
        Print(path + "\n");
      } else {
        RenderCheckpoint(c, path);
      }
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
