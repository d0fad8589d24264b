#include "agent/launcher/container_launcher.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <sstream>

#include "agent/launcher/container_args.h"
#include "agent/launcher/process_launcher.h"
#include "agent/launcher/run_command.h"

namespace det::agent {
namespace {

constexpr auto kHelperTimeout = std::chrono::seconds(30);

class ContainerProcess : public Process {
 public:
  ContainerProcess(std::unique_ptr<Process> client, Launcher* helper, std::string runtime,
                   std::string name, std::map<std::string, std::string> env)
      : client_(std::move(client)),
        helper_(helper),
        runtime_(std::move(runtime)),
        name_(std::move(name)),
        env_(std::move(env)) {}

  ~ContainerProcess() override {
    if (!waited_) {
      (void)Signal(SIGKILL);
      (void)client_->Wait();
      Remove();
    }
  }

  int pid() const override { return client_->pid(); }

  Status Signal(int signo) override {
    CommandResult r =
        RunCommand(*helper_, BuildContainerKillArgv(runtime_, name_, signo), env_, kHelperTimeout);
    if (r.exit_code == 0) return Status::Ok();
    // No container yet (the image is still being pulled) or already gone: the client is what
    // runs, and a killed client creates no container.
    Status s = client_->Signal(signo);
    if (signo == SIGKILL) Remove();  // in case it was created just now
    return s;
  }

  int Wait() override {
    int code = client_->Wait();
    waited_ = true;
    Remove();  // --rm removes it; this covers a client that died before removing it
    return code;
  }

 private:
  void Remove() {
    (void)RunCommand(*helper_, {runtime_, "rm", "-f", "--ignore", name_}, env_, kHelperTimeout);
  }

  std::unique_ptr<Process> client_;
  Launcher* helper_;
  const std::string runtime_;
  const std::string name_;
  const std::map<std::string, std::string> env_;
  std::atomic<bool> waited_{false};
};

}  // namespace

ContainerLauncher::ContainerLauncher(std::unique_ptr<Launcher> inner, std::string runtime,
                                     std::string data_dir,
                                     std::map<std::string, std::string> client_env)
    : inner_(std::move(inner)),
      helper_(std::make_unique<ProcessLauncher>()),
      runtime_(std::move(runtime)),
      data_dir_(std::move(data_dir)),
      client_env_(std::move(client_env)) {}

Result<std::unique_ptr<Process>> ContainerLauncher::Launch(const LaunchSpec& spec,
                                                           OutputCallback on_output) {
  if (spec.container.empty()) return inner_->Launch(spec, std::move(on_output));
  if (runtime_.empty()) return FailedPrecondition("this agent has no container runtime");
  LaunchSpec client = spec;
  client.warm.reset();
  DET_ASSIGN_OR_RETURN(std::unique_ptr<Process> process,
                       helper_->Launch(client, std::move(on_output)));
  return std::unique_ptr<Process>(std::make_unique<ContainerProcess>(
      std::move(process), helper_.get(), runtime_, spec.container, client_env_));
}

void ContainerLauncher::Start() {
  if (!runtime_.empty()) {
    CommandResult ps = RunCommand(
        *helper_, {runtime_, "ps", "-aq", "--filter", "label=" + ContainerAgentLabel(data_dir_)},
        client_env_, kHelperTimeout);
    std::istringstream ids(ps.exit_code == 0 ? ps.output : "");
    std::vector<std::string> rm = {runtime_, "rm", "-f"};
    for (std::string id; ids >> id;) rm.push_back(id);
    if (rm.size() > 3) {
      CommandResult r = RunCommand(*helper_, rm, client_env_, kHelperTimeout);
      spdlog::info("removed {} container(s) a previous run of this agent left (exit {})",
                   rm.size() - 3, r.exit_code);
    }
  }
  inner_->Start();
}

}  // namespace det::agent
