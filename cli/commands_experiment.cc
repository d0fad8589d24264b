// det experiment create / list / describe / activate / pause / cancel / kill / archive /
// unarchive (the other experiment commands are in commands_experiment_manage.cc).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "cli/local_test_mode.h"
#include "cli/cli_context.h"
#include "cli/config_override.h"
#include "cli/context_packer.h"
#include "cli/format.h"
#include "cli/paginate.h"
#include "cli/table.h"
#include "cli/trial_logs.h"
#include "common/http_client.h"
#include "master/config/experiment_config.h"
#include "master/config/template_merge.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

bool IsTerminalState(const std::string& state) {
  return state == "STATE_COMPLETED" || state == "STATE_CANCELED" || state == "STATE_ERROR" ||
         state == "STATE_DELETED" || state == "STATE_DELETING" || state == "STATE_DELETE_FAILED";
}

// ---------------------------------------------------------------------------------- create

struct CreateArgs {
  std::string config_file;
  std::string context_dir;
  std::vector<std::string> overrides;
  std::vector<std::string> includes;
  bool paused = false;
  bool follow = false;
  bool test_mode = false;
  bool local = false;
  std::string template_name;  // --template: merged under the config by the master
  int64_t project_id = 0;     // --project_id: 0 = the default project
};

// Validates the config with the master's own parser, so that a bad config is reported with the
// master's messages before anything is uploaded.
Status ValidateConfigLocally(const std::string& config) {
  Result<master::config::ExperimentConfig> cfg =
      master::config::ParseExperimentConfig(config, LocalValidationDefaults());
  return cfg.status();
}

// Follows a test-mode experiment to its end: prints the stages the trial reaches, then
// "Model definition test succeeded! 🎉" or fails with the final state.
Status FollowTestExperiment(Session& session, int64_t experiment_id) {
  std::string base = "/api/v1/experiments/" + std::to_string(experiment_id);
  std::string last_stage;
  for (;;) {
    DET_ASSIGN_OR_RETURN(json resp, session.Get(base));
    std::string state = JsonString(resp.value("experiment", json::object()), "state");
    DET_ASSIGN_OR_RETURN(json trials_resp, session.Get(base + "/trials"));
    json trials = trials_resp.value("trials", json::array());
    std::string stage = "Scheduling task";
    std::optional<int64_t> trial_id;
    if (trials.is_array() && !trials.empty()) {
      trial_id = JsonInt(trials[0].value("id", json()));
      std::string trial_state = JsonString(trials[0], "state");
      if (trial_state == "STATE_RUNNING") stage = "Testing training";
      std::string runner = JsonString(trials[0], "runnerState");
      if (runner.find("valid") != std::string::npos) stage = "Testing validation";
      if (runner.find("checkpoint") != std::string::npos) stage = "Testing checkpointing";
    }
    if (stage != last_stage && !IsTerminalState(state)) {
      Print(stage + "\n");
      last_stage = stage;
    }
    if (state == "STATE_COMPLETED") {
      Print("Model definition test succeeded! \U0001F389\n");
      return Status::Ok();
    }
    if (IsTerminalState(state)) {
      std::string msg = "test experiment " + std::to_string(experiment_id) + " ended in state " +
                        StripStatePrefix(state);
      if (trial_id) msg += "; see `det trial logs " + std::to_string(*trial_id) + "`";
      return FailedPrecondition(msg);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status FollowFirstTrial(Session& session, int64_t experiment_id) {
  Print("Waiting for first trial to begin...\n");
  std::string trials_path = "/api/v1/experiments/" + std::to_string(experiment_id) + "/trials";
  std::optional<int64_t> trial_id;
  for (int i = 0;; ++i) {
    DET_ASSIGN_OR_RETURN(json resp, session.Get(trials_path));
    json trials = resp.value("trials", json::array());
    if (trials.is_array()) {
      for (const json& t : trials) {
        std::optional<int64_t> id = JsonInt(t.value("id", json()));
        if (id && (!trial_id || *id < *trial_id)) trial_id = id;
      }
    }
    if (trial_id) break;
    if (i % 20 == 19) {
      // An experiment that ends before any trial starts would otherwise be waited on forever.
      DET_ASSIGN_OR_RETURN(json exp,
                           session.Get("/api/v1/experiments/" + std::to_string(experiment_id)));
      std::string state = JsonString(exp.value("experiment", json::object()), "state");
      if (IsTerminalState(state)) {
        std::string msg = "experiment " + std::to_string(experiment_id) + " ended in state " +
                          StripStatePrefix(state) + " before a trial started";
        if (state == "STATE_ERROR") return FailedPrecondition(msg);
        std::cerr << msg << "\n";
        return Status::Ok();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Print("Following first trial with ID " + std::to_string(*trial_id) + "\n");
  TrialLogOptions options;
  options.follow = true;
  return PrintTrialLogs(session, *trial_id, options);
}

namespace {

Status CreateExperiment(CliContext& ctx, const CreateArgs& args) {
  Result<std::string> text = ReadFile(args.config_file);
  if (!text.ok()) return InvalidArgument("cannot read the config file " + args.config_file);
  DET_ASSIGN_OR_RETURN(std::string config, ApplyConfigOverrides(*text, args.overrides));
  // With --template the master merges the template under the config; the config checked here
  // (and turned into a test-mode config) is that merge.
  std::string submitted = config;
  if (!args.template_name.empty()) {
    Session& session = ctx.GetSession();
    DET_ASSIGN_OR_RETURN(json tpl,
                         session.Get("/api/v1/templates/" + UrlEncode(args.template_name)));
    DET_ASSIGN_OR_RETURN(json user_config, master::config::YamlToJson(config));
    json tpl_config = tpl.value("template", json::object()).value("config", json::object());
    config = master::config::MergeTemplate(user_config.is_null() ? json::object() : user_config,
                                           tpl_config)
                 .dump(2);
  }
  if (args.local) {
    if (!args.test_mode) {
      return Unimplemented("--local: only --local --test-mode is supported (run without --local "
                           "to train on a cluster)");
    }
    DET_RETURN_IF_ERROR(ValidateConfigLocally(config));
    // Without a context directory the local test runs in the current directory.
    DET_ASSIGN_OR_RETURN(
        int code, RunLocalTestMode(config, args.context_dir.empty() ? "." : args.context_dir));
    if (code != 0) {
      return FailedPrecondition("model definition test failed (exit status " +
                                std::to_string(code) + ")");
    }
    return Status::Ok();
  }
  if (args.test_mode) Print("Validating experiment configuration...\n");
  // Every problem is reported here, with the master's messages, before anything is uploaded.
  DET_RETURN_IF_ERROR(ValidateConfigLocally(config));
  if (args.test_mode) {
    Session& session = ctx.GetSession();
    json check = {{"config", config}, {"modelDefinition", json::array()}, {"validateOnly", true},
                  {"activate", false}};
    DET_RETURN_IF_ERROR(session.Post("/api/v1/experiments", check, 600).status());
    Print("Experiment configuration validation succeeded! \U0001F389\n");
    DET_ASSIGN_OR_RETURN(json user_config, master::config::YamlToJson(config));
    uint64_t seed = static_cast<uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count());
    config = master::config::MakeTestModeConfig(user_config, seed).dump(2);
  }
  DET_ASSIGN_OR_RETURN(std::vector<ContextEntry> entries,
                       ListContext(args.context_dir, args.includes));
  uint64_t size = 0;
  size_t files = 0;
  for (const ContextEntry& e : entries) {
    size += e.size;
    if (e.type == kFileTypeRegular) ++files;
  }
  Print("Preparing files to send to master... " + FormatSize(static_cast<double>(size)) +
        " and " + std::to_string(files) + " files\n");
  DET_ASSIGN_OR_RETURN(PackedContext packed, PackEntries(entries));

  Session& session = ctx.GetSession();
  if (args.test_mode) Print("Creating test experiment...\n");
  // A test-mode config already holds the template; otherwise the master merges it.
  bool send_template = !args.template_name.empty() && !args.test_mode;
  json body = {{"config", send_template ? submitted : config},
               {"modelDefinition", std::move(packed.files)},
               {"activate", args.test_mode || !args.paused}};
  if (send_template) body["template"] = args.template_name;
  if (args.project_id > 0) body["projectId"] = args.project_id;
  DET_ASSIGN_OR_RETURN(json resp, session.Post("/api/v1/experiments", body, 600));
  json warnings = resp.value("warnings", json::array());
  if (warnings.is_array()) {
    for (const json& w : warnings) {
      std::cerr << (w.is_string() ? w.get<std::string>() : w.dump()) << "\n";
    }
  }
  std::optional<int64_t> id = JsonInt(resp.value("experiment", json::object()).value("id", json()));
  if (!id) return Internal("the master's answer names no experiment id");
  if (args.test_mode) {
    Print("Created test experiment " + std::to_string(*id) + "\n");
    return FollowTestExperiment(session, *id);
  }
  Print("Created experiment " + std::to_string(*id) + "\n");
  if (args.follow && !args.paused) return FollowFirstTrial(session, *id);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------- list

struct ListArgs {
  bool all = false;
  bool csv = false;
  bool json_out = false;
  int64_t limit = 200;
  int64_t offset = 0;
  std::string pages = "1";
  bool show_project = false;  // --show_project: Workspace and Project columns first
};

Status ListExperiments(CliContext& ctx, const ListArgs& args) {
  Session& session = ctx.GetSession();
  std::optional<std::string> me;
  if (!args.all) {
    DET_ASSIGN_OR_RETURN(std::string name, session.Username());
    me = name;
  }
  int64_t max_pages = -1;
  if (args.pages != "all") {
    char* end = nullptr;
    long long n = std::strtoll(args.pages.c_str(), &end, 10);
    if (args.pages.empty() || *end != '\0' || n <= 0) {
      return InvalidArgument("--pages must be 'all' or a positive integer, not '" + args.pages +
                             "'");
    }
    max_pages = n;
  }
  json experiments = json::array();
  int64_t offset = args.offset;
  for (int64_t page = 0; max_pages < 0 || page < max_pages; ++page) {
    std::string path = "/api/v1/experiments?offset=" + std::to_string(offset) +
                       "&limit=" + std::to_string(args.limit);
    if (!args.all) path += "&archived=false&users=" + UrlEncode(*me);
    DET_ASSIGN_OR_RETURN(json resp, session.Get(path));
    json items = resp.value("experiments", json::array());
    if (!items.is_array()) break;
    for (json& e : items) {
      if (me && JsonString(e, "username", *me) != *me) continue;
      if (!args.all && e.value("archived", false)) continue;
      experiments.push_back(std::move(e));
    }
    json pagination = resp.value("pagination", json());
    if (!pagination.is_object() || items.empty()) break;
    std::optional<int64_t> end = JsonInt(pagination.value("endIndex", json()));
    std::optional<int64_t> total = JsonInt(pagination.value("total", json()));
    if (!end || !total || *end >= *total) break;
    offset = *end;
  }
  if (args.json_out) {
    Print(experiments.dump(4) + "\n");
    return Status::Ok();
  }
  std::vector<std::string> headers = {"ID",    "Owner",    "Name",    "Parent ID",    "State",
                                      "Progress", "Started", "Ended", "Resource Pool"};
  if (args.show_project) headers.insert(headers.begin(), {"Workspace", "Project"});
  if (args.all) headers.push_back("Archived");
  std::vector<TableRow> rows;
  for (const json& e : experiments) {
    TableRow row = {JsonCell(e.value("id", json())),
                    JsonString(e, "username"),
                    JsonString(e, "name"),
                    JsonCell(e.value("parentId", json())),
                    StripStatePrefix(JsonString(e, "state")),
                    FormatPercent(e.value("progress", json())),
                    FormatTime(e.value("startTime", json())),
                    FormatTime(e.value("endTime", json())),
                    JsonString(e, "resourcePool")};
    if (args.show_project) {
      row.insert(row.begin(), {JsonString(e, "workspaceName"), JsonString(e, "projectName")});
    }
    if (args.all) row.push_back(JsonCell(e.value("archived", json(false))));
    rows.push_back(std::move(row));
  }
  Print(args.csv ? RenderCsv(headers, rows) : RenderPresto(headers, rows) + "\n");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------- describe

struct DescribeArgs {
  std::string ids;
  bool json_out = false;
  bool csv = false;
  bool metrics = false;  // accepted for compatibility; metrics are always shown
  std::string outdir;    // --outdir: experiments.csv, trials.csv, workloads.csv there
};

std::vector<std::string> ScalarMetricNames(const json& workloads, const char* kind) {
  std::set<std::string> names;
  for (const json& w : workloads) {
    auto it = w.find(kind);
    if (it == w.end() || !it->is_object()) continue;
    json avg = it->value("metrics", json::object());
    if (avg.is_object() && avg.contains("avgMetrics")) avg = avg["avgMetrics"];
    if (!avg.is_object()) continue;
    for (auto m = avg.begin(); m != avg.end(); ++m) {
      if (m.value().is_number()) names.insert(m.key());
    }
  }
  return {names.begin(), names.end()};
}

TableCell MetricCell(const json& detail, const std::string& name) {
  json avg = detail.value("metrics", json::object());
  if (avg.is_object() && avg.contains("avgMetrics")) avg = avg["avgMetrics"];
  if (!avg.is_object() || !avg.contains(name)) return std::nullopt;
  return JsonCell(avg[name]);
}

std::string MaxCell(const TableCell& a, const TableCell& b) {
  std::string x = a.value_or(""), y = b.value_or("");
  return x > y ? x : y;
}

Status DescribeExperiments(CliContext& ctx, const DescribeArgs& args) {
  Session& session = ctx.GetSession();
  std::vector<int64_t> ids;
  std::stringstream ss(args.ids);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    long long id = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0') {
      return InvalidArgument("experiment id '" + part + "' is not an integer");
    }
    ids.push_back(id);
  }
  if (ids.empty()) return InvalidArgument("an experiment id is required");

  json responses = json::array();
  std::vector<json> trials_per_exp;
  for (int64_t id : ids) {
    std::string base = "/api/v1/experiments/" + std::to_string(id);
    DET_ASSIGN_OR_RETURN(json resp, session.Get(base));
    DET_ASSIGN_OR_RETURN(json trials, FetchPages(session, base + "/trials", "trials"));
    trials_per_exp.push_back(trials);
    resp["trials"] = trials;
    responses.push_back(std::move(resp));
  }
  if (args.json_out) {
    Print(responses.dump(4) + "\n");
    return Status::Ok();
  }
  // With --outdir the sections are CSV files, as Determined's.
  const bool csv = args.csv || !args.outdir.empty();
  auto render = [&](const std::vector<std::string>& h, const std::vector<TableRow>& r) {
    return csv ? RenderCsv(h, r) : RenderPresto(h, r) + "\n";
  };
  // Prints a section under its title, or with --outdir writes it to outdir/file.
  auto emit = [&](const char* title, const char* file, const std::string& text) -> Status {
    if (args.outdir.empty()) {
      if (!args.csv) Print(title);
      Print(text);
      return Status::Ok();
    }
    std::string path = args.outdir + "/" + file;
    std::ofstream out(path, std::ios::binary);
    if (!out || !out.write(text.data(), static_cast<std::streamsize>(text.size()))) {
      return InvalidArgument("--outdir: cannot write " + path);
    }
    return Status::Ok();
  };

  std::vector<TableRow> exp_rows;
  for (const json& resp : responses) {
    json e = resp.value("experiment", json::object());
    std::vector<std::string> labels;
    if (e.contains("labels") && e["labels"].is_array()) {
      for (const json& l : e["labels"]) labels.push_back(l.is_string() ? l.get<std::string>() : l.dump());
    }
    std::sort(labels.begin(), labels.end());
    std::string label_text;
    for (const std::string& l : labels) label_text += (label_text.empty() ? "" : ", ") + l;
    exp_rows.push_back({JsonCell(e.value("id", json())),
                        StripStatePrefix(JsonString(e, "state")),
                        FormatPercent(e.value("progress", json())),
                        FormatTime(e.value("startTime", json())),
                        FormatTime(e.value("endTime", json())),
                        JsonString(e, "name"),
                        JsonString(e, "description"),
                        JsonCell(e.value("archived", json(false))),
                        JsonString(e, "resourcePool"),
                        label_text});
  }
  DET_RETURN_IF_ERROR(emit("Experiment:\n", "experiments.csv",
                           render({"Experiment ID", "State", "Progress", "Started", "Ended",
                                   "Name", "Description", "Archived", "Resource Pool", "Labels"},
                                  exp_rows)));

  std::vector<TableRow> trial_rows;
  for (size_t i = 0; i < responses.size(); ++i) {
    for (const json& t : trials_per_exp[i]) {
      trial_rows.push_back({JsonCell(t.value("id", json())), std::to_string(ids[i]),
                            StripStatePrefix(JsonString(t, "state")),
                            FormatTime(t.value("startTime", json())),
                            FormatTime(t.value("endTime", json())),
                            t.value("hparams", json::object()).dump(4)});
    }
  }
  DET_RETURN_IF_ERROR(emit(
      "\nTrials:\n", "trials.csv",
      render({"Trial ID", "Experiment ID", "State", "Started", "Ended", "H-Params"}, trial_rows)));

  // Workloads: one row per step (total batches), merging its training, validation and
  // checkpoint workloads, as Determined's describe does.
  std::vector<std::pair<int64_t, json>> workloads_per_trial;
  json all_workloads = json::array();
  for (const json& trials : trials_per_exp) {
    for (const json& t : trials) {
      std::optional<int64_t> tid = JsonInt(t.value("id", json()));
      if (!tid) continue;
      DET_ASSIGN_OR_RETURN(
          json wls, FetchPages(session, "/api/v1/trials/" + std::to_string(*tid) + "/workloads",
                             "workloads"));
      for (const json& w : wls) all_workloads.push_back(w);
      workloads_per_trial.emplace_back(*tid, std::move(wls));
    }
  }
  std::vector<std::string> t_names = ScalarMetricNames(all_workloads, "training");
  std::vector<std::string> v_names = ScalarMetricNames(all_workloads, "validation");
  std::vector<std::string> headers = {"Trial ID", "# of Batches", "State", "Report Time"};
  for (const std::string& n : t_names) headers.push_back("Training Metric: " + n);
  for (const char* h : {"Checkpoint State", "Checkpoint Report Time", "Checkpoint UUID",
                        "Validation State", "Validation Report Time"}) {
    headers.push_back(h);
  }
  for (const std::string& n : v_names) headers.push_back("Validation Metric: " + n);
  const size_t ckpt = 4 + t_names.size();  // index of "Checkpoint State"
  const size_t val = ckpt + 3;             // index of "Validation State"

  std::vector<TableRow> wl_rows;
  for (const auto& [tid, wls] : workloads_per_trial) {
    std::vector<int64_t> order;
    std::map<int64_t, TableRow> by_batches;
    for (const json& w : wls) {
      const char* kind = w.contains("training") && w["training"].is_object() ? "training"
                         : w.contains("validation") && w["validation"].is_object() ? "validation"
                         : w.contains("checkpoint") && w["checkpoint"].is_object() ? "checkpoint"
                                                                                   : nullptr;
      if (kind == nullptr) continue;
      const json& d = w[kind];
      int64_t batches = JsonInt(d.value("totalBatches", json(0))).value_or(0);
      std::string state = StripStatePrefix(JsonString(d, "state", "STATE_COMPLETED"));
      TableCell time = FormatTime(d.value("endTime", json()));
      auto it = by_batches.find(batches);
      if (it == by_batches.end()) {
        TableRow row(headers.size());
        row[0] = std::to_string(tid);
        row[1] = std::to_string(batches);
        row[2] = state;
        row[3] = time;
        row[ckpt] = "";
        row[val] = "";
        it = by_batches.emplace(batches, std::move(row)).first;
        order.push_back(batches);
      } else {
        it->second[3] = MaxCell(it->second[3], time);
      }
      TableRow& row = it->second;
      if (std::string(kind) == "training") {
        for (size_t i = 0; i < t_names.size(); ++i) {
          if (!row[4 + i]) row[4 + i] = MetricCell(d, t_names[i]);
        }
      } else if (std::string(kind) == "checkpoint") {
        row[ckpt] = state;
        row[ckpt + 1] = time;
        row[ckpt + 2] = JsonString(d, "uuid");
      } else {
        row[val] = state;
        row[val + 1] = time;
        for (size_t i = 0; i < v_names.size(); ++i) {
          if (!row[val + 2 + i]) row[val + 2 + i] = MetricCell(d, v_names[i]);
        }
      }
    }
    for (int64_t b : order) wl_rows.push_back(std::move(by_batches[b]));
  }
  return emit("\nWorkloads:\n", "workloads.csv", render(headers, wl_rows));
}

// ---------------------------------------------------------------------------------- actions

CLI::App* AddStateAction(CLI::App* exp, CliContext& ctx, const std::string& verb,
                         const std::string& past, const std::string& help) {
  auto id = std::make_shared<int64_t>(0);
  CLI::App* cmd = exp->add_subcommand(verb, help);
  cmd->add_option("EXPERIMENT_ID", *id, "the experiment")->required();
  cmd->callback([&ctx, id, verb, past] {
    ctx.SetAction(verb + " experiment", [&ctx, id, verb, past]() -> Status {
      DET_ASSIGN_OR_RETURN(json resp,
                           ctx.GetSession().Post("/api/v1/experiments/" + std::to_string(*id) +
                                                     "/" + verb,
                                                 json::object()));
      (void)resp;
      Print(past + " experiment " + std::to_string(*id) + "\n");
      return Status::Ok();
    });
  });
  return cmd;
}

// det experiment delete ID [--yes]: the experiment, its checkpoints' files and all its records.
void AddDeleteCommand(CLI::App* exp, CliContext& ctx) {
  auto id = std::make_shared<int64_t>(0);
  auto yes = std::make_shared<bool>(false);
  CLI::App* cmd = exp->add_subcommand("delete", "delete an experiment, its checkpoints and records");
  cmd->add_option("EXPERIMENT_ID", *id, "the experiment")->required();
  cmd->add_flag("--yes,-y", *yes, "do not ask for confirmation");
  cmd->callback([&ctx, id, yes] {
    ctx.SetAction("delete experiment", [&ctx, id, yes]() -> Status {
      if (!*yes) {
        std::cout << "Deleting an experiment removes all of its checkpoints and records. "
                     "Continue? [y/N] " << std::flush;
        std::string answer;
        std::getline(std::cin, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
          Print("Aborting\n");
          return Status::Ok();
        }
      }
      DET_ASSIGN_OR_RETURN(json resp,
                           ctx.GetSession().Call("DELETE", "/api/v1/experiments/" +
                                                               std::to_string(*id),
                                                 json::object()));
      (void)resp;
      Print("Deleting experiment " + std::to_string(*id) + "\n");
      return Status::Ok();
    });
  });
}

}  // namespace

void RegisterExperimentCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* exp = app.add_subcommand("experiment", "manage experiments")->alias("e");
  exp->alias("exp");
  exp->require_subcommand(1);

  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = exp->add_subcommand("create", "create an experiment");
  create->add_option("CONFIG", create_args->config_file, "experiment config file (.yaml)")
      ->required();
  create->add_option("CONTEXT_DIR", create_args->context_dir,
                     "directory of the model definition (uploaded to the master); optional: "
                     "without it the experiment has no files (only --include ones)");
  create->add_option("--config", create_args->overrides,
                     "override a config value, e.g. --config hyperparameters.lr=0.1 "
                     "(repeatable)")
      ->allow_extra_args(false);
  create->add_option("-i,--include", create_args->includes,
                     "also upload this file or directory, under its base name (repeatable)")
      ->allow_extra_args(false);
  create->add_flag("--paused", create_args->paused, "create the experiment paused");
  create->add_option("--template", create_args->template_name,
                     "name of a config template to merge under the config");
  create->add_option("--project_id,--project-id", create_args->project_id,
                     "place this experiment inside the project with this id")
      ->check(PositiveInt());
  create->add_flag("-f,--follow-first-trial", create_args->follow,
                   "stream the logs of the first trial");
  create->add_flag("-t,--test-mode,--test", create_args->test_mode,
                   "validate the config, then run one trial of one batch (searcher single, "
                   "max_length {batches: 1}) and report whether the model definition works");
  create->add_flag("--local", create_args->local,
                   "with --test-mode: test the model definition on this machine, no master");
  create->callback([&ctx, create_args] {
    ctx.SetAction("create experiment",
                  [&ctx, create_args] { return CreateExperiment(ctx, *create_args); });
  });

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = exp->add_subcommand("list", "list experiments")->alias("ls");
  list->add_flag("--all,-a", list_args->all, "show all users' experiments, archived too");
  list->add_flag("--csv", list_args->csv, "print CSV");
  list->add_flag("--show_project,--show-project", list_args->show_project,
                 "include columns for workspace name and project name");
  list->add_flag("--json", list_args->json_out, "print JSON");
  list->add_option("--limit", list_args->limit, "maximum experiments per page (default 200)")
      ->check(PositiveInt());
  list->add_option("--offset", list_args->offset, "experiments to skip (default 0)")
      ->check(NonNegativeInt());
  list->add_option("--pages", list_args->pages, "pages to fetch: 'all' or N (default 1)");
  list->callback([&ctx, list_args] {
    ctx.SetAction("list experiments",
                  [&ctx, list_args] { return ListExperiments(ctx, *list_args); });
  });

  auto describe_args = std::make_shared<DescribeArgs>();
  CLI::App* describe = exp->add_subcommand("describe", "describe experiments");
  describe->add_option("EXPERIMENT_IDS", describe_args->ids,
                       "experiment id, or a comma-separated list of ids")
      ->required();
  describe->add_flag("--json", describe_args->json_out, "print JSON");
  describe->add_flag("--csv", describe_args->csv, "print CSV");
  describe->add_option("--outdir", describe_args->outdir,
                       "directory to save output (experiments.csv, trials.csv, workloads.csv)");
  describe->add_flag("--metrics", describe_args->metrics, "accepted for compatibility: metrics are always shown");
  describe->callback([&ctx, describe_args] {
    ctx.SetAction("describe experiment",
                  [&ctx, describe_args] { return DescribeExperiments(ctx, *describe_args); });
  });

  AddStateAction(exp, ctx, "activate", "Activated", "activate an experiment")->alias("unpause");
  AddStateAction(exp, ctx, "pause", "Paused", "pause an experiment");
  AddDeleteCommand(exp, ctx);
  AddStateAction(exp, ctx, "cancel", "Canceled", "cancel an experiment");
  AddStateAction(exp, ctx, "kill", "Killed", "kill an experiment");
  AddStateAction(exp, ctx, "archive", "Archived", "archive an experiment");
  AddStateAction(exp, ctx, "unarchive", "Unarchived", "unarchive an experiment");
  RegisterExperimentManageCommands(exp, ctx);
}

}  // namespace det::cli
