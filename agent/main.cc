// determined-agent: flags -> AgentConfig -> Agent::Run. See docs/agent.md.

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/detect/container_runtime.h"
#include "agent/detect/slots.h"
#include "agent/launcher/container_launcher.h"
#include "agent/launcher/process_launcher.h"
#include "agent/launcher/run_command.h"
#include "agent/launcher/warm_launcher.h"
#include "common/clock.h"
#include "common/http_client.h"
#include "common/paths.h"
#include "common/secret_file.h"

namespace {

std::string Hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "agent";
  return buf;
}

std::string DefaultHarnessPath() { return det::HarnessDirNearExecutable(); }

}  // namespace

int main(int argc, char** argv) {
  // `determined-agent run ...` as in Determined: drop the optional verb.
  std::vector<char*> args(argv, argv + argc);
  if (args.size() > 1 && std::string(args[1]) == "run") args.erase(args.begin() + 1);

  det::agent::AgentConfig config;
  config.python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  int slots = 1;
  std::string slot_type = "auto";
  std::string log_level = "info";

  CLI::App app{"determined-agent: runs trials for a determined-master"};
  app.add_option("--master-url", config.master_url, "master address")
      ->envname("DET_MASTER_URL")
      ->capture_default_str();
  app.add_option("--agent-id", config.agent_id, "agent id (default: the hostname)")
      ->envname("DET_AGENT_ID");
  app.add_option("--slots", slots, "CPU slots to offer when no GPU is found")
      ->envname("DET_SLOTS")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--slot-type", slot_type, "auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "gpu"}))
      ->capture_default_str();
  app.add_option("--resource-pool", config.resource_pool, "resource pool to join")
      ->envname("DET_RESOURCE_POOL")
      ->capture_default_str();
  app.add_option("--data-dir", config.data_dir, "work directories go to DIR/work/<allocationId>")
      ->capture_default_str();
  app.add_option("--harness-path", config.harness_path,
                 "prepended to PYTHONPATH (default: <bin>/../../harness when it exists)");
  app.add_option("--python", config.python, "DET_PYTHON_EXECUTABLE for processes")
      ->envname("DET_PYTHON_EXECUTABLE")
      ->capture_default_str();
  app.add_option("--poll-timeout", config.poll_timeout_seconds, "command long poll, seconds")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  app.add_option("--warm-python", config.warm_python,
                 "start python entrypoints as forks of a warm interpreter (true | false)")
      ->envname("DET_AGENT_WARM_PYTHON")
      ->capture_default_str();
  std::string preload = "determined";
  app.add_option("--warm-python-preload", preload,
                 "comma-separated modules the warm interpreter imports once, e.g. determined,torch")
      ->envname("DET_AGENT_WARM_PYTHON_PRELOAD")
      ->capture_default_str();
  std::string container_runtime = "auto";
  app.add_option("--container-runtime", container_runtime,
                 "what runs trials that name an image: auto (docker with a running engine, else "
                 "podman) | podman | docker | none")
      ->envname("DET_AGENT_CONTAINER_RUNTIME")
      ->check(CLI::IsMember({"auto", "podman", "docker", "none"}))
      ->capture_default_str();
  app.add_option("--podman-oci-runtime", config.podman_oci_runtime,
                 "podman --runtime for containers (empty: podman's default)")
      ->envname("DET_AGENT_PODMAN_OCI_RUNTIME")
      ->capture_default_str();
  app.add_flag("--exit-after-allocation", config.exit_after_allocation,
               "serve one allocation, then exit (the agent of a Slurm job)");
  app.add_option("--log-level", log_level, "trace | debug | info | warn | error")
      ->envname("DET_AGENT_LOG_LEVEL")
      ->capture_default_str();
  std::string agent_token_file, master_cert_file, master_cert_name;
  app.add_option("--agent-token-file", agent_token_file,
                 "file holding the cluster agent secret (the master's security.agent_token)")
      ->envname("DET_AGENT_TOKEN_FILE");
  app.add_option("--master-cert-file,--security-tls-master-cert", master_cert_file,
                 "CA file to verify the master's TLS certificate, or 'noverify'")
      ->envname("DET_MASTER_CERT_FILE");
  app.add_option("--master-cert-name,--security-tls-master-cert-name", master_cert_name,
                 "the name in the master's certificate when it differs from the URL's host")
      ->envname("DET_MASTER_CERT_NAME");
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  spdlog::set_level(spdlog::level::from_str(log_level));
  config.warm_python_preload.clear();
  for (size_t start = 0; start <= preload.size();) {
    size_t comma = std::min(preload.find(',', start), preload.size());
    if (comma > start) config.warm_python_preload.push_back(preload.substr(start, comma - start));
    start = comma + 1;
  }
  config.hostname = Hostname();
  if (config.agent_id.empty()) config.agent_id = config.hostname;
  if (app.count("--harness-path") == 0) config.harness_path = DefaultHarnessPath();
  config.cli_dir = det::CliDirNearExecutable();
  std::error_code ec;
  config.data_dir = std::filesystem::absolute(config.data_dir, ec).lexically_normal().string();
  while (config.data_dir.size() > 1 && config.data_dir.back() == '/') config.data_dir.pop_back();
  if (!config.harness_path.empty()) {
    config.harness_path = std::filesystem::absolute(config.harness_path, ec).string();
  }
  if (auto master = det::agent::ParseMasterUrl(config.master_url); !master.ok()) {
    spdlog::error("{}", master.status().message());
    return 2;
  }
  // Exported before any thread starts: the agent's own clients and every process it starts
  // (DET_MASTER_CERT_FILE is what the Python package reads) verify the master the same way.
  if (!master_cert_file.empty()) {
    if (master_cert_file != "noverify") {
      master_cert_file = std::filesystem::absolute(master_cert_file, ec).string();
      if (!std::filesystem::exists(master_cert_file)) {
        spdlog::error("--master-cert-file: '{}' does not exist", master_cert_file);
        return 2;
      }
    }
    setenv("DET_MASTER_CERT_FILE", master_cert_file.c_str(), 1);
  }
  if (!master_cert_name.empty()) setenv("DET_MASTER_CERT_NAME", master_cert_name.c_str(), 1);
  det::HttpClient::SetDefaultTls(det::TlsOptionsFromEnvironment());
  if (!agent_token_file.empty()) {
    auto secret = det::ReadSecretFile(agent_token_file);
    if (!secret.ok() || secret->empty()) {
      spdlog::error("--agent-token-file: {}",
                    secret.ok() ? "'" + agent_token_file + "' is empty" : secret.status().message());
      return 2;
    }
    config.agent_secret = *secret;
    // The agent's own key: made once and kept, so the id stays bound to this agent.
    std::filesystem::create_directories(config.data_dir, ec);
    auto key = det::ReadOrCreateSecretFile(config.data_dir + "/agent.key");
    if (!key.ok()) {
      spdlog::error("agent key: {}", key.status().message());
      return 2;
    }
    config.agent_key = *key;
  }

  det::agent::SlotType type = det::agent::SlotType::kAuto;
  if (slot_type == "cpu") type = det::agent::SlotType::kCpu;
  if (slot_type == "cuda" || slot_type == "gpu") type = det::agent::SlotType::kCuda;
  auto detected = det::agent::DetectSlots(type, config.agent_id, slots);
  if (!detected.ok()) {
    spdlog::error("slot detection: {}", detected.status().message());
    return 2;
  }

  {
    det::agent::ProcessLauncher probe_launcher;
    auto probe = [&](const std::vector<std::string>& argv) {
      return det::agent::RunCommand(probe_launcher, argv, det::agent::CurrentEnvironment(),
                                    std::chrono::seconds(20))
          .exit_code;
    };
    auto runtime = det::agent::ChooseContainerRuntime(container_runtime, probe);
    if (!runtime.ok()) {
      spdlog::error("{}", runtime.status().message());
      return 2;
    }
    config.container_runtime = *runtime;
    spdlog::info("container runtime: {}", config.container_runtime.empty()
                                              ? std::string("none (trials naming an image fail)")
                                              : config.container_runtime);
  }

  // Signals: SIGTERM/SIGINT go to a waiting thread (blocked everywhere else); child processes
  // get a clean mask and default dispositions from the launcher.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  static det::SystemClock clock;
  // Never destroyed: Run() may leave the polling thread blocked in a long poll; we _Exit below.
  std::unique_ptr<det::agent::Launcher> launcher = std::make_unique<det::agent::ProcessLauncher>();
  if (config.warm_python) {
    det::agent::ZygoteOptions zygote;
    zygote.python = config.python;
    zygote.env = det::agent::ZygoteEnvironment(det::agent::CurrentEnvironment(), config.python,
                                               config.harness_path, config.data_dir,
                                               config.cli_dir);
    zygote.cwd = config.data_dir;
    zygote.preload = config.warm_python_preload;
    launcher = std::make_unique<det::agent::WarmLauncher>(std::move(launcher), std::move(zygote));
  }
  launcher = std::make_unique<det::agent::ContainerLauncher>(
      std::move(launcher), config.container_runtime, config.data_dir,
      det::agent::CurrentEnvironment());
  auto* agent =
      new det::agent::Agent(config, std::move(detected).value(), std::move(launcher), &clock);
  std::thread([agent, stop_signals] {
    int signo = 0;
    sigwait(&stop_signals, &signo);
    spdlog::info("received signal {}; shutting down", signo);
    agent->Stop();
  }).detach();

  det::Status status = agent->Run();
  if (!status.ok()) spdlog::error("{}", status.message());
  spdlog::shutdown();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status.ok() ? 0 : 1);
}
