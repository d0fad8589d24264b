// ExperimentService: what a trial's process starts with (LaunchOf) and what the end of its
// allocation means for the trial (AllocationEnded, through core::InterpretExit).
#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include "master/core/exit_policy.h"
#include "master/core/trial_searcher.h"
#include "master/server/checkpoint_service.h"
#include "master/server/container_spec.h"
#include "master/server/experiment_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

namespace {

// environment.environment_variables is a list of "K=V" or a per-device map of such lists.
void AddConfigEnv(const json& config, const std::string& device, json* env) {
  if (!config.contains("environment") || !config["environment"].is_object()) return;
  const json& ev = config["environment"].value("environment_variables", json());
  const json* list = &ev;
  if (ev.is_object()) {
    if (!ev.contains(device)) return;
    list = &ev[device];
  }
  if (!list->is_array()) return;
  for (const auto& item : *list) {
    if (!item.is_string()) continue;
    std::string kv = item.get<std::string>();
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    (*env)[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
}

}  // namespace

Result<TrialLaunch> ExperimentService::LaunchOf(const AllocationRuntime& alloc,
                                                const std::string& device) {
  // Not FindTrial: a placement needs only this trial, and its search may go on publishing.
  auto found = trials_.find(alloc.trial_id);
  if (found == trials_.end()) {
    return NotFound("trial " + std::to_string(alloc.trial_id) + " not live");
  }
  TrialRuntime* trial = found->second.get();
  const ExperimentRuntime& exp = *experiments_.at(trial->experiment_id);
  DET_ASSIGN_OR_RETURN(std::optional<store::CheckpointRow> latest,
                       deps_.checkpoints->LatestCompleted(trial->id));
  DET_ASSIGN_OR_RETURN(std::string user_token, deps_.auth->CreateSession(exp.owner_id));
  if (trial->run_progress.allocation_id != alloc.id) {  // once per allocation, not per rank
    trial->run_progress = {alloc.id, latest ? latest->steps_completed : 0, false, false};
  }
  ExperimentRuntime& placed = *experiments_.at(trial->experiment_id);
  if (trial->allocation_id == alloc.id &&
      trial->decided->presence == core::TrialPresence::kQueued) {
    // Its queued run got its slots: from now on its end is an exit to decide on.
    DET_RETURN_IF_ERROR(Decide(placed, core::Placed{trial->request_id}));
  }
  TrialLaunch launch;
  // An image other than the built-in default runs in a container (docs/operations.md).
  DET_ASSIGN_OR_RETURN(launch.container, ContainerSpecFor(exp.config, device));
  launch.entrypoint = exp.config.entrypoint;
  json& env = launch.env;
  AddConfigEnv(exp.config.defaulted, device, &env);
  std::string hook = TcdStartupHook(TaskContainerDefaultsFor(
      deps_.config->task_container_defaults, deps_.config->pools,
      deps_.allocations->ResolvePool(exp.config.resources.resource_pool,
                                     exp.config.resources.slots_per_trial)));
  if (!hook.empty()) env["DET_TCD_STARTUP_HOOK"] = hook;
  env["DET_USER"] = exp.username;
  env["DET_USER_TOKEN"] = user_token;
  env["DET_TASK_TYPE"] = "TRIAL";
  env["DET_EXPERIMENT_ID"] = std::to_string(exp.id);
  env["DET_TRIAL_ID"] = std::to_string(trial->id);
  env["DET_TRIAL_RUN_ID"] = std::to_string(trial->run_id);
  env["DET_TRIAL_SEED"] = std::to_string(trial->seed);
  env["DET_HPARAMS"] = trial->hparams.dump();
  env["DET_EXPERIMENT_CONFIG"] = exp.config.defaulted.dump();
  env["DET_STEPS_COMPLETED"] = std::to_string(latest ? latest->steps_completed : 0);
  if (!trial->searcher().ops.empty()) {
    // The answer GET .../searcher/operation gives now: the harness starts training without
    // asking (docs/operations.md, "Trial start cost"). Only this trial's own report changes it.
    env["DET_SEARCHER_OP"] = json{{"trialId", trial->id},
                                  {"allocationId", alloc.id},
                                  {"requestId", trial->request_id},
                                  {"length", std::to_string(trial->searcher().ops.front())}}
                                 .dump();
  }
  if (latest) {
    env["DET_LATEST_CHECKPOINT"] = latest->uuid;
  } else if (!trial->warm_start_checkpoint_uuid.empty()) {
    // Warm start: the weights of another trial, while this trial's own count starts at zero.
    env["DET_LATEST_CHECKPOINT"] = trial->warm_start_checkpoint_uuid;
  }
  return launch;
}

// Whether a line the allocation logged matches a cancel_retries policy (log_policies, in either
// of Determined's forms: {name?, pattern, action: cancel_retries | {type: cancel_retries}}).
// Read when a run fails, from the trial's latest lines: the agent ships a process's lines
// before its exit.
bool ExperimentService::MatchesCancelRetries(const json& policies, int64_t trial_id,
                                             const std::string& allocation_id) {
  if (!policies.is_array()) return false;
  std::vector<std::unique_ptr<RE2>> patterns;
  for (const json& p : policies) {
    if (!p.is_object() || !p.contains("pattern") || !p["pattern"].is_string()) continue;
    const json& action = p.value("action", json());
    json type = action.is_object() ? action.value("type", json()) : action;
    if (type != "cancel_retries") continue;
    auto re = std::make_unique<RE2>(p["pattern"].get<std::string>(), RE2::Quiet);
    if (re->ok()) patterns.push_back(std::move(re));
  }
  if (patterns.empty()) return false;
  Result<std::vector<store::TaskLogRow>> lines =
      deps_.store->ListTrialLogs(trial_id, 0, kLogPolicyLines, /*descending=*/true);
  if (!lines.ok()) {
    spdlog::error("log policies of trial {}: {}", trial_id, lines.status().ToString());
    return false;
  }
  for (const store::TaskLogRow& row : *lines) {
    if (row.allocation_id != allocation_id) continue;
    for (const auto& re : patterns) {
      if (RE2::PartialMatch(row.log, *re)) return true;
    }
  }
  return false;
}

Status ExperimentService::AllocationEnded(const AllocationRuntime& alloc, const AllocationEnd& end,
                                          store::DecisionWrites writes) {
  TrialRuntime* found = FindTrial(alloc.trial_id);
  if (found == nullptr || found->allocation_id != alloc.id) {
    // Not the trial's allocation (any more): only its row changes.
    if (found != nullptr) NotifyTrial(found->id);
    return deps_.store->ApplyDecision(writes).status();
  }
  TrialRuntime& trial = *found;
  ExperimentRuntime& exp = *experiments_.at(trial.experiment_id);
  trial.allocation_id.clear();

  core::ProcessEnd process_end{end.exit_code, end.killed_by_user, end.preemption_acked,
                               end.infrastructure, end.maybe_out_of_ops};
  const TrialRuntime::RunProgress& run = trial.run_progress;
  if (run.allocation_id == alloc.id && run.followed_op && end.exit_code == 0) {
    process_end.followed_op = true;
    process_end.progressed = run.completed_op;
    if (!process_end.progressed && !trial.searcher().ops.empty()) {
      DET_ASSIGN_OR_RETURN(std::optional<store::CheckpointRow> latest,
                           deps_.checkpoints->LatestCompleted(trial.id));
      process_end.progressed = latest && latest->steps_completed > run.start_steps;
    }
  }
  if (end.exit_code != 0 && !end.killed_by_user && !end.preemption_acked) {
    process_end.dont_retry = MatchesCancelRetries(exp.config.log_policies, trial.id, alloc.id);
  }
  // The allocation's end, the trial's new state (or run) and the log line: one transaction.
  Result<core::Decision> d =
      exp.core->Decide(core::ProcessExited{trial.request_id, process_end});
  if (!d.ok()) {
    DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(writes).status());
    return d.status();
  }
  if (!end.never_started && d->exit) {
    std::string msg = "Trial " + std::to_string(trial.id) + " (Experiment " +
                      std::to_string(exp.id) + ") exited with code " +
                      std::to_string(end.exit_code) + ": " + core::ExitPhrase(end.exit_code);
    if (!end.error.empty()) msg += ": " + end.error;
    writes.logs.push_back(
        deps_.logs->Row(trial.id, trial.task_id, msg + " (" + d->exit->reason + ")"));
  }
  NotifyTrial(trial.id);
  return Carry(exp, *d, std::move(writes));
}

}  // namespace det::master::server
