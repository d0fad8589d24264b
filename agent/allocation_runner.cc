#include "agent/allocation_runner.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>

#include "agent/allocation_records.h"
#include "agent/client/backoff.h"
#include "agent/client/master_client.h"
#include "agent/launcher/container_args.h"
#include "agent/warm_python.h"
#include "common/archive.h"
#include "common/http_client.h"

namespace det::agent {
namespace {

constexpr int kKilledExitCode = 128 + SIGKILL;
constexpr int kStartFailedExitCode = 1;
constexpr int kExecFailedExitCode = 127;
// How long a context download keeps retrying while the master is unreachable.
constexpr auto kContextRetryFor = std::chrono::seconds(120);

// Writes `content` to a file only its owner can read (registry credentials).
Status WritePrivateFile(const std::string& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      return Internal("write " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return Status::Ok();
}

std::string EnvOr(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

}  // namespace

AllocationRunner::AllocationRunner(Command start, RunnerEnv env,
                                   std::function<void(const std::string&)> on_done)
    : start_(std::move(start)), env_(std::move(env)), on_done_(std::move(on_done)) {
  LogMetadata metadata{start_.task_id, start_.allocation_id, env_.config->agent_id,
                       start_.allocation_id};
  std::string token = EnvOr(start_.env, "DET_SESSION_TOKEN");
  std::unique_ptr<Poster> poster =
      env_.log_poster_factory ? env_.log_poster_factory(token)
                              : std::make_unique<HttpPoster>(env_.master.url, "/api/v1/task/logs",
                                                             AllocationTokenHeaders(token));
  shipper_ = std::make_unique<LogShipper>(std::move(metadata), std::move(poster), env_.clock,
                                          env_.config->log_options);
}

AllocationRunner::~AllocationRunner() {
  Kill();
  if (thread_.joinable()) thread_.join();
}

void AllocationRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void AllocationRunner::Kill() { Signal(SIGKILL); }

void AllocationRunner::Signal(int signo) {
  std::lock_guard<std::mutex> lock(mu_);
  if (process_ == nullptr) {
    if (signo == SIGKILL || signo == SIGTERM) kill_requested_ = true;
    return;
  }
  if (signo == SIGKILL) kill_requested_ = true;
  Status s = process_->Signal(signo);
  if (!s.ok()) spdlog::warn("allocation {}: {}", start_.allocation_id, s.message());
}

void AllocationRunner::SetShutdownDeadline(std::chrono::steady_clock::time_point deadline) {
  shutdown_deadline_ns_.store(deadline.time_since_epoch().count());
}

void AllocationRunner::OnOutput(StdType type, std::string_view data) {
  const char* name = StdTypeName(type);
  for (const auto& line : splitters_[type == StdType::kStdout ? 0 : 1].Feed(data)) {
    shipper_->AddLine(name, line);
  }
}

void AllocationRunner::FlushLogs() {
  while (!shipper_->Flush(std::chrono::steady_clock::now() + std::chrono::milliseconds(200))) {
    int64_t deadline = shutdown_deadline_ns_.load();
    if (deadline != 0 && std::chrono::steady_clock::now().time_since_epoch().count() >= deadline) {
      spdlog::warn("allocation {}: giving up on unshipped log lines at shutdown",
                   start_.allocation_id);
      return;
    }
  }
}

void AllocationRunner::WarnIfFailed(const Status& status) const {
  if (!status.ok()) spdlog::warn("allocation {}: {}", start_.allocation_id, status.message());
}

void AllocationRunner::Fail(int exit_code, const std::string& error) {
  spdlog::warn("allocation {}: {}", start_.allocation_id, error);
  shipper_->AddRaw("stderr", "LOG_LEVEL_ERROR", error + "\n");
  FlushLogs();
  env_.events->Enqueue(AgentEvent::Exited(start_.allocation_id, exit_code, error));
}

Status AllocationRunner::Prepare(const std::string& workdir) {
  std::error_code ec;
  std::filesystem::create_directories(workdir, ec);
  if (ec) return Internal("create work dir " + workdir + ": " + ec.message());
  std::string token = EnvOr(start_.env, "DET_SESSION_TOKEN");
  HttpClient http(env_.master.url);
  Backoff backoff(env_.config->retry_initial, env_.config->retry_max);
  auto give_up_at = std::chrono::steady_clock::now() + kContextRetryFor;
  std::optional<std::string> key;
  if (env_.contexts != nullptr) key = ContextCache::KeyFor(env_.cluster_id, start_.env);
  while (true) {
    Result<ContextCache::Blob> tgz = Internal("not fetched");
    if (key) {
      tgz = env_.contexts->GetOrFetch(
          *key, [&] { return FetchContextDirectory(http, start_.task_id, token); });
    } else {
      Result<std::string> fetched = FetchContextDirectory(http, start_.task_id, token);
      tgz = fetched.ok() ? Result<ContextCache::Blob>(
                               std::make_shared<const std::string>(std::move(fetched).value()))
                         : Result<ContextCache::Blob>(fetched.status());
    }
    if (tgz.ok()) {
      if ((*tgz)->empty()) return Status::Ok();
      Status s = ExtractTarGz(**tgz, workdir);
      if (!s.ok()) return Internal("extract context directory: " + s.message());
      return Status::Ok();
    }
    if (tgz.status().code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() >= give_up_at) {
      return tgz.status();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (kill_requested_) return tgz.status();
    }
    spdlog::warn("allocation {}: {}; retrying", start_.allocation_id, tgz.status().message());
    std::this_thread::sleep_for(backoff.Next());
  }
}

Status AllocationRunner::MakeContainerSpec(const AgentEnv& agent_env, LaunchSpec* spec) {
  DET_ASSIGN_OR_RETURN(ContainerSpec container, ParseContainerSpec(start_.container));
  const std::string& runtime = env_.config->container_runtime;
  if (runtime.empty()) {
    return FailedPrecondition("agent " + env_.config->agent_id +
                              " has no container runtime (podman, or docker with a running "
                              "engine) to run image " +
                              container.image +
                              ": install podman there, or use the built-in default image to "
                              "run the trial as a process");
  }
  // As docker does, and podman does not: a missing host path is created (e.g. a shared_fs
  // checkpoint directory before the first checkpoint).
  for (const ContainerBindMount& m : container.bind_mounts) {
    std::error_code ec;
    if (!std::filesystem::exists(m.host_path, ec)) {
      std::filesystem::create_directories(m.host_path, ec);
      if (ec) return Internal("bind mount " + m.host_path + ": " + ec.message());
    }
  }
  // The entrypoint runs with the image's python, found on the image's PATH.
  DET_ASSIGN_OR_RETURN(std::vector<std::string> argv,
                       BuildEntrypointArgv(start_.entrypoint, PythonFor(start_.env, "python3")));
  std::map<std::string, std::string> inside = ContainerEnvironment(start_.env, agent_env);
  ContainerRun run;
  run.runtime = runtime;
  run.oci_runtime = env_.config->podman_oci_runtime;
  run.name = ContainerName(start_.allocation_id);
  run.workdir = agent_env.workdir;
  run.harness_path = agent_env.harness_path;
  run.data_dir = env_.config->data_dir;
  run.allocation_id = start_.allocation_id;
  run.gpu_uuids = agent_env.gpu_uuids;
  // The container client's own environment is the agent's; the values of the container's
  // variables travel in it too and `-e NAME` hands them over, so no secret shows in argv.
  std::map<std::string, std::string> client_env = env_.base_env;
  for (const auto& [k, v] : inside) {
    client_env[k] = v;
    run.env_names.push_back(k);
  }
  if (!container.registry_auth.is_null()) {
    DET_ASSIGN_OR_RETURN(std::string auth,
                         RegistryAuthFile(container.registry_auth, container.image));
    std::string dir = agent_env.workdir + "/.det-registry-auth";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Internal("create " + dir + ": " + ec.message());
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    DET_RETURN_IF_ERROR(WritePrivateFile(dir + "/config.json", auth));
    run.authfile = dir + "/config.json";
    client_env["DOCKER_CONFIG"] = dir;
  }
  spec->argv = BuildContainerRunArgv(run, container, WrapWithStartupHook(argv));
  spec->env = std::move(client_env);
  spec->container = run.name;
  spec->warm.reset();
  return Status::Ok();
}

void AllocationRunner::Run() {
  const std::string& id = start_.allocation_id;
  spdlog::info("allocation {}: starting (task {})", id, start_.task_id);
  std::string workdir;
  if (!IsSafeRelativePath(id) || id.find('/') != std::string::npos) {
    Fail(kStartFailedExitCode, "bad allocation id \"" + id + "\"");
  } else {
    workdir = AllocationWorkDir(env_.config->data_dir, id);
    Status prepared = Prepare(workdir);
    auto argv = BuildEntrypointArgv(start_.entrypoint, PythonFor(start_.env, env_.config->python));
    bool killed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      killed = kill_requested_;
    }
    if (killed) {
      Fail(kKilledExitCode, "killed before the process started");
    } else if (!prepared.ok()) {
      Fail(kStartFailedExitCode, prepared.message());
    } else if (!argv.ok()) {
      Fail(kStartFailedExitCode, "bad entrypoint: " + argv.status().message());
    } else {
      AgentEnv agent_env;
      agent_env.master = env_.master;
      agent_env.cluster_id = env_.cluster_id;
      agent_env.master_id = env_.master_id;
      agent_env.agent_id = env_.config->agent_id;
      agent_env.allocation_id = id;
      agent_env.slot_ids = start_.slot_ids;
      for (int slot_id : start_.slot_ids) {
        for (const auto& slot : env_.slots) {
          if (slot.id == slot_id && slot.type == "cuda") agent_env.gpu_uuids.push_back(slot.uuid);
        }
      }
      agent_env.workdir = workdir;
      agent_env.harness_path = env_.config->harness_path;
      agent_env.python = env_.config->python;
      agent_env.cli_dir = env_.config->cli_dir;
      LaunchSpec spec;
      spec.argv = WrapWithStartupHook(*argv);
      spec.env = BuildProcessEnv(env_.base_env, start_.env, agent_env);
      spec.cwd = workdir;
      Status in_container = Status::Ok();
      if (!start_.container.is_null()) in_container = MakeContainerSpec(agent_env, &spec);
      // A startup hook is sourced by a shell before the entrypoint: only a cold start runs it.
      if (!in_container.ok()) {
        // Reported below, before anything is launched.
      } else if (!spec.container.empty()) {
        spdlog::info("allocation {}: runs in container {} ({})", id, spec.container,
                     env_.config->container_runtime);
      } else if (env_.config->warm_python) {
        auto tcd_hook = spec.env.find("DET_TCD_STARTUP_HOOK");
        auto plan =
            std::filesystem::exists(workdir + "/startup-hook.sh")
                ? Result<WarmPythonPlan>(FailedPrecondition("the context has a startup-hook.sh"))
            : tcd_hook != spec.env.end() && !tcd_hook->second.empty()
                ? Result<WarmPythonPlan>(FailedPrecondition(
                      "task_container_defaults has a startup_hook"))
                : PlanWarmPython(*argv, spec.env);
        if (plan.ok()) {
          spec.warm = std::move(plan).value();
        } else {
          spdlog::info("allocation {}: cold start: {}", id, plan.status().message());
        }
      }

      // Recorded before the launch, so that an agent killed at any point from here on leaves
      // a trace its next start uses to end these processes (orphan_cleanup.h).
      AllocationRecords records(env_.config->data_dir);
      AllocationRecord record{id, workdir, 0};
      Result<std::unique_ptr<Process>> launched = Internal("not launched");
      Process* process = nullptr;
      {
        std::lock_guard<std::mutex> lock(mu_);
        killed = kill_requested_;
        if (!killed && in_container.ok()) {
          WarnIfFailed(records.Write(record));
          launched = env_.launcher->Launch(
              spec, [this](StdType t, std::string_view d) { OnOutput(t, d); });
          if (launched.ok()) {
            process_ = std::move(launched).value();
            process = process_.get();
            record.pid = process->pid();
            WarnIfFailed(records.Write(record));
          } else {
            WarnIfFailed(records.Remove(id));
          }
        }
      }
      if (killed) {
        Fail(kKilledExitCode, "killed before the process started");
      } else if (!in_container.ok()) {
        Fail(kStartFailedExitCode, in_container.message());
      } else if (process == nullptr) {
        Fail(kExecFailedExitCode, "start process: " + launched.status().message());
      } else {
        spdlog::info("allocation {}: started pid {}", id, process->pid());
        env_.events->Enqueue(AgentEvent::Started(id, process->pid()));
        int exit_code = process->Wait();
        spdlog::debug("allocation {}: process exited with {}; shipping its last log lines", id,
                      exit_code);
        WarnIfFailed(records.Remove(id));  // the group is gone: nothing left to clean up
        for (int i = 0; i < 2; ++i) {
          if (auto rest = splitters_[i].Finish())
            shipper_->AddLine(i == 0 ? "stdout" : "stderr", *rest);
        }
        FlushLogs();
        spdlog::info("allocation {}: exited with {}", id, exit_code);
        env_.events->Enqueue(AgentEvent::Exited(id, exit_code));
      }
    }
  }
  if (on_done_) on_done_(id);
  done_.store(true);
}

}  // namespace det::agent
