// det experiment config / logs / wait / download-model-def / download: the experiment
// commands of Determined's CLI beyond create/list/describe and the lifecycle.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "cli/checkpoint_download.h"
#include "cli/checkpoint_render.h"
#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/table.h"
#include "cli/trial_logs.h"
#include "cli/yaml_render.h"
#include "common/base64.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

std::string ExperimentPath(int64_t id) { return "/api/v1/experiments/" + std::to_string(id); }

bool IsTerminal(const std::string& state) {
  return state == "STATE_COMPLETED" || state == "STATE_CANCELED" || state == "STATE_ERROR" ||
         state == "STATE_DELETED";
}

}  // namespace

void RegisterExperimentParityCommands(CLI::App* exp, CliContext& ctx) {
  auto config_id = std::make_shared<int64_t>(0);
  CLI::App* config = exp->add_subcommand("config", "display experiment config");
  config->add_option("EXPERIMENT_ID", *config_id, "experiment ID")
      ->required()
      ->check(PositiveInt());
  config->callback([&ctx, config_id] {
    ctx.SetAction("get experiment config", [&ctx, config_id]() -> Status {
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Get(ExperimentPath(*config_id)));
      json cfg = resp.value("experiment", json::object()).value("config", json::object());
      if (resp.contains("config") && resp["config"].is_object()) cfg = resp["config"];
      Print(RenderYaml(cfg));
      return Status::Ok();
    });
  });

  struct LogsArgs {
    int64_t id = 0;
    bool follow = false;
    int64_t head = -1;
    int64_t tail = -1;
    TrialLogFilterArgs filters;
  };
  auto la = std::make_shared<LogsArgs>();
  CLI::App* logs = exp->add_subcommand("logs", "fetch logs of the first trial of an experiment");
  logs->add_option("EXPERIMENT_ID", la->id, "experiment ID")->required()->check(PositiveInt());
  logs->add_flag("-f,--follow", la->follow, "follow the logs of a running trial");
  logs->add_option("--head", la->head, "number of lines to show from the beginning")
      ->check(NonNegativeInt());
  logs->add_option("--tail", la->tail, "number of lines to show from the end")
      ->check(NonNegativeInt());
  la->filters.AddTo(logs);
  logs->callback([&ctx, la] {
    ctx.SetAction("get experiment logs", [&ctx, la]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json resp, s.Get(ExperimentPath(la->id) + "/trials"));
      std::optional<int64_t> first;
      for (const json& t : resp.value("trials", json::array())) {
        std::optional<int64_t> id = JsonInt(t.value("id", json()));
        if (id && (!first || *id < *first)) first = id;
      }
      if (!first) return NotFound("experiment " + std::to_string(la->id) + " has no trials");
      TrialLogOptions options;
      la->filters.Finish(options);
      options.follow = la->follow;
      if (la->head >= 0) options.head = la->head;
      if (la->tail >= 0) options.tail = la->tail;
      if (options.head && options.tail) {
        return InvalidArgument("--head and --tail cannot be combined");
      }
      return PrintTrialLogs(s, *first, options);
    });
  });

  struct WaitArgs {
    int64_t id = 0;
    double interval = 5.0;
  };
  auto wa = std::make_shared<WaitArgs>();
  CLI::App* wait = exp->add_subcommand("wait", "wait for experiment to reach terminal state");
  wait->add_option("EXPERIMENT_ID", wa->id, "experiment ID")->required()->check(PositiveInt());
  wait->add_option("--polling-interval", wa->interval,
                   "the interval (in seconds) to poll for updated state (default 5)")
      ->check(CLI::PositiveNumber);
  wait->callback([&ctx, wa] {
    ctx.SetAction("wait for experiment", [&ctx, wa]() -> Status {
      Session& s = ctx.GetSession();
      for (;;) {
        DET_ASSIGN_OR_RETURN(json resp, s.Get(ExperimentPath(wa->id)));
        std::string state = JsonString(resp.value("experiment", json::object()), "state");
        if (IsTerminal(state)) {
          // As Determined: exit status 1 unless COMPLETED.
          if (state == "STATE_COMPLETED") return Status::Ok();
          return FailedPrecondition("experiment " + std::to_string(wa->id) + " ended " +
                                    StripStatePrefix(state));
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(wa->interval));
      }
    });
  });

  struct ModelDefArgs {
    int64_t id = 0;
    std::string output_dir = ".";
  };
  auto md = std::make_shared<ModelDefArgs>();
  CLI::App* model_def = exp->add_subcommand("download-model-def", "download model definition");
  model_def->add_option("EXPERIMENT_ID", md->id, "experiment ID")->required()->check(PositiveInt());
  model_def->add_option("--output-dir", md->output_dir, "output directory (default .)");
  model_def->callback([&ctx, md] {
    ctx.SetAction("download model definition", [&ctx, md]() -> Status {
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Get(ExperimentPath(md->id) + "/model_def"));
      DET_ASSIGN_OR_RETURN(std::string tgz, Base64Decode(resp.value("b64Tgz", "")));
      std::filesystem::path dst = std::filesystem::path(md->output_dir) /
                                  ("experiment_" + std::to_string(md->id) + "_model_def.tgz");
      std::ofstream out(dst, std::ios::binary);
      if (!out || !out.write(tgz.data(), static_cast<std::streamsize>(tgz.size()))) {
        return InvalidArgument("cannot write " + dst.string());
      }
      return Status::Ok();
    });
  });

  struct DownloadArgs {
    int64_t id = 0;
    std::string output_dir = "checkpoints";
    int64_t top_n = 1;
    std::string sort_by;
    std::string smaller_is_better;
    bool quiet = false;
  };
  auto da = std::make_shared<DownloadArgs>();
  CLI::App* download = exp->add_subcommand("download", "download checkpoints for an experiment");
  download->add_option("EXPERIMENT_ID", da->id, "experiment ID to download")
      ->required()
      ->check(PositiveInt());
  download->add_option("-o,--output-dir", da->output_dir,
                       "top level directory for the checkpoints (default checkpoints)");
  download->add_option("--top-n", da->top_n, "the number of checkpoints to download (default 1)")
      ->check(PositiveInt());
  download->add_option("--sort-by", da->sort_by, "the validation metric to sort on");
  download->add_option("--smaller-is-better", da->smaller_is_better,
                       "the sort order for --sort-by (true|false)");
  download->add_flag("-q,--quiet", da->quiet, "only print the paths to the checkpoints");
  download->callback([&ctx, da] {
    ctx.SetAction("download checkpoints", [&ctx, da]() -> Status {
      if (da->sort_by.empty() != da->smaller_is_better.empty()) {
        return InvalidArgument("--sort-by and --smaller-is-better must be given together");
      }
      std::string query = "?sortByAttr=SORT_BY_SEARCHER_METRIC&limit=" + std::to_string(da->top_n);
      if (!da->sort_by.empty()) {
        bool smaller = da->smaller_is_better == "true" || da->smaller_is_better == "True" ||
                       da->smaller_is_better == "1";
        query = "?sortByAttr=SORT_BY_METRIC_NAME&metricName=" + da->sort_by +
                "&orderBy=" + (smaller ? "ORDER_BY_ASC" : "ORDER_BY_DESC") +
                "&limit=" + std::to_string(da->top_n);
      }
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json resp, s.Get(ExperimentPath(da->id) + "/checkpoints" + query));
      for (const json& c : resp.value("checkpoints", json::array())) {
        std::string uuid = JsonString(c, "uuid");
        std::string target = (std::filesystem::path(da->output_dir) / uuid).string();
        DET_ASSIGN_OR_RETURN(std::string path,
                             DownloadCheckpoint(s, c, target, DownloadMode::kAuto));
        if (da->quiet) {
          Print(path + "\n");
        } else {
          Print("Local checkpoint path:\n" + path + " \n\n");
          Print(RenderPresto(CheckpointDescribeHeaders(), {CheckpointDescribeRow(c)}) + "\n\n");
        }
      }
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
