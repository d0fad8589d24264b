// det preview-search CONFIG: shows, without running anything, the trials a search would create,
// the length each would train to, and the total units.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/cli_context.h"
#include "cli/config_override.h"
#include "cli/table.h"
#include "master/config/experiment_config.h"
#include "master/searcher/simulate.h"

namespace det::cli {
namespace {

struct PreviewArgs {
  std::string config_file;
  std::vector<std::string> overrides;
  std::string metric = "spread";
};

std::string UnitName(const master::config::ExperimentConfig& cfg) {
  const nlohmann::json& s = cfg.defaulted.value("searcher", nlohmann::json::object());
  if (s.contains("time_metric") && s["time_metric"].is_string()) {
    return s["time_metric"].get<std::string>();
  }
  for (const char* key : {"max_length", "length_per_round"}) {
    if (s.contains(key) && s[key].is_object() && s[key].size() == 1) return s[key].begin().key();
  }
  if (!cfg.searcher.max_length) return "units";
  switch (cfg.searcher.max_length->unit) {
    case master::config::Length::Unit::kBatches: return "batches";
    case master::config::Length::Unit::kRecords: return "records";
    case master::config::Length::Unit::kEpochs: return "epochs";
    case master::config::Length::Unit::kUnitless: return "units";
  }
  return "units";
}

Status Preview(const PreviewArgs& args) {
  std::ifstream in(args.config_file);
  if (!in) return InvalidArgument("CONFIG: cannot read " + args.config_file);
  std::stringstream ss;
  ss << in.rdbuf();
  DET_ASSIGN_OR_RETURN(std::string text, ApplyConfigOverrides(ss.str(), args.overrides));
  DET_ASSIGN_OR_RETURN(master::config::ExperimentConfig cfg,
                       master::config::ParseExperimentConfig(text, LocalValidationDefaults()));
  master::searcher::SimulateOptions options;
  if (args.metric == "constant") {
    options.metric = master::searcher::SimulatedMetric::kConstant;
  } else if (args.metric == "trial-index") {
    options.metric = master::searcher::SimulatedMetric::kTrialIndex;
  } else if (args.metric != "spread") {
    return InvalidArgument("--metric: '" + args.metric +
                           "' is not one of spread, constant, trial-index");
  }
  DET_ASSIGN_OR_RETURN(master::searcher::SimulateResult sim,
                       master::searcher::Simulate(cfg, options));
  std::string unit = UnitName(cfg);
  std::cout << "Using search configuration:\n"
            << cfg.defaulted.value("searcher", nlohmann::json::object()).dump(2) << "\n\n";
  std::cout << "This search will create a total of " << sim.trials.size() << " trial(s) and train "
            << sim.total_units << " " << unit << " in all.\n\n";
  std::vector<TableRow> rows;
  for (const auto& o : sim.outcomes) {
    rows.push_back({std::to_string(o.count), std::to_string(o.length) + " " + unit});
  }
  std::cout << RenderPresto({"Trials", "Training Length"}, rows) << "\n";
  rows.clear();
  for (size_t i = 0; i < sim.trials.size(); ++i) {
    const auto& t = sim.trials[i];
    std::string lengths;
    for (uint64_t l : t.lengths) lengths += (lengths.empty() ? "" : ", ") + std::to_string(l);
    rows.push_back({std::to_string(i + 1),
                    t.parent ? TableCell(std::to_string(*t.parent + 1)) : TableCell(),
                    lengths, t.hparams.dump()});
  }
  std::cout << "\nHyperparameters are drawn with reproducibility.experiment_seed (0 when unset "
               "here; the master uses the current time).\n"
            << RenderPresto({"Trial", "Parent", "Validates After", "Hyperparameters"}, rows)
            << "\n";
  return Status::Ok();
}

}  // namespace

master::config::ConfigDefaults LocalValidationDefaults() {
  master::config::ConfigDefaults d;
  d.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/tmp"}};
  return d;
}

void RegisterPreviewCommands(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<PreviewArgs>();
  CLI::App* cmd = app.add_subcommand(
      "preview-search", "show the trials a search would create, without running anything");
  cmd->add_option("CONFIG", args->config_file, "experiment config file (.yaml)")->required();
  cmd->add_option("--config", args->overrides, "override a config field: key.path=value");
  // A constant metric gives the shape every timing of a real run must reach (docs/simulation.md).
  cmd->add_option("--metric", args->metric,
                  "the metric trials report in the simulation: spread (default; trial i reports "
                  "the radical inverse of i + 1), constant (1.0), trial-index (i + 1)");
  cmd->callback([&ctx, args] {
    ctx.SetAction("preview search", [args] { return Preview(*args); });
  });
}

}  // namespace det::cli
