#pragma once
// CliContext: what every `det` command shares: the global flags, the lazily created Session,
// and the action the parsed command line selected. Commands register themselves on the CLI11
// app with the Register*Commands functions; their parse callbacks only record an action, which
// RunCli runs after parsing. An action returns a Status; RunCli prints a failure as
// `Failed to <what>: <message>` on stderr and exits 1.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/session.h"
#include "common/status.h"
#include "master/config/experiment_config.h"

namespace det::cli {

class CliContext {
 public:
  std::string master_flag;  // -m
  std::string user_flag;    // -u

  // The master URL from -m / $DET_MASTER / $DET_MASTER_ADDR / the default.
  std::string MasterUrl() const;
  // The session to the master (created on first use).
  Session& GetSession();

  // Records the action to run; `what` completes "Failed to <what>: ...".
  void SetAction(std::string what, std::function<Status()> action) {
    what_ = std::move(what);
    action_ = std::move(action);
  }
  const std::string& what() const { return what_; }
  const std::function<Status()>& action() const { return action_; }

 private:
  std::unique_ptr<Session> session_;
  std::string what_;
  std::function<Status()> action_;
};

// A whole file's bytes (commands_experiment.cc); NotFound naming it when it cannot be read.
Result<std::string> ReadFile(const std::string& path);

void RegisterUserCommands(CLI::App& app, CliContext& ctx);
void RegisterMasterCommands(CLI::App& app, CliContext& ctx);  // master info, agent list
void RegisterAgentAdminCommands(CLI::App& app, CLI::App& agent, CliContext& ctx);
// `det slot list` (commands_slot_list.cc), under the `slot` command.
void RegisterSlotListCommand(CLI::App& slot, CliContext& ctx);
void RegisterExperimentCommands(CLI::App& app, CliContext& ctx);
void RegisterTrialCommands(CLI::App& app, CliContext& ctx);
void RegisterDeployCommands(CLI::App& app, CliContext& ctx);
void RegisterPreviewCommands(CLI::App& app, CliContext& ctx);
void RegisterTemplateCommands(CLI::App& app, CliContext& ctx);  // det template (tpl)
void RegisterWebhookCommands(CLI::App& app, CliContext& ctx);   // det webhook
// det resource-pool (rp) bindings ... (commands_resource_pool.cc).
void RegisterResourcePoolCommands(CLI::App& app, CliContext& ctx);
// det cmd, notebook, shell, tensorboard, task (commands_ntsc.cc).
void RegisterNtscCommands(CLI::App& app, CliContext& ctx);

// Defaults for validating a config before upload: the master merges its own checkpoint storage
// under the experiment's, so a config that sets only save_* values is valid; a placeholder
// shared_fs stands in for the master's.
master::config::ConfigDefaults LocalValidationDefaults();
void RegisterCheckpointCommands(CLI::App& app, CliContext& ctx);
// `det trial download TRIAL_ID (--best | --latest | --uuid U)` under `det trial`.
void RegisterTrialDownloadCommand(CLI::App* trial, CliContext& ctx);
void RegisterJobCommands(CLI::App& app, CliContext& ctx);
// det model ... (the model registry).
void RegisterModelCommands(CLI::App& app, CliContext& ctx);
// continue, label, set, list-trials, list-checkpoints under `det experiment`.
void RegisterExperimentManageCommands(CLI::App* experiment, CliContext& ctx);

// `det experiment list-checkpoints` / `det checkpoint list`: GET
// /api/v1/experiments/{id}/checkpoints?sortByAttr=SORT_BY_SEARCHER_METRIC&limit=N (with --best)
// or ?sortByAttr=SORT_BY_END_TIME, printed as a table (or CSV).
Status ListExperimentCheckpoints(CliContext& ctx, int64_t experiment_id,
                                 std::optional<int64_t> best, bool csv);

// Reads one line from stdin; with a TTY the prompt goes to stderr and echo is turned off.
std::string ReadPassword(const std::string& prompt);
// user list / create / activate / deactivate / rename / change-password / edit under `det user`.
void RegisterUserAdminCommands(CLI::App* user, CliContext& ctx);
// `-f/--follow-first-trial`: waits for the experiment's first trial and streams its logs.
Status FollowFirstTrial(Session& session, int64_t experiment_id);
// config, logs, wait, download-model-def, download under `det experiment`.
void RegisterExperimentParityCommands(CLI::App* experiment, CliContext& ctx);
// det workspace, det project and det experiment move.
void RegisterWorkspaceProjectCommands(CLI::App& app, CliContext& ctx);

// Asks `<prompt> [y/n]: ` on stdout until y/yes or n/no is read from stdin; end of input is no.
bool AskYesOrNo(const std::string& prompt);

// Parses argv and runs the selected command; returns the process exit code.
int RunCli(int argc, char** argv);

// CLI11 validators with short messages ("must be a positive integer").
CLI::Validator PositiveInt();
CLI::Validator NonNegativeInt();

// Writes `text` to stdout and flushes.
void Print(const std::string& text);

}  // namespace det::cli
