#include "agent/launcher/warm_launcher.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "agent/launcher/process_launcher.h"

namespace det::agent {
namespace {

constexpr auto kRestartEvery = std::chrono::seconds(10);

std::string RealPath(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  return ec ? "" : real.string();
}

std::string EnvOr(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

}  // namespace

WarmLauncher::WarmLauncher(std::unique_ptr<Launcher> cold, ZygoteOptions options)
    : cold_(std::move(cold)), options_(std::move(options)) {
  zygote_python_ = RealPath(ResolveProgram(options_.python, options_.env));
}

WarmLauncher::~WarmLauncher() {
  std::lock_guard<std::mutex> lock(mu_);
  zygote_.reset();
}

void WarmLauncher::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  last_start_ = std::chrono::steady_clock::now();
  auto zygote = std::make_unique<Zygote>(options_, cold_.get());
  Status started = zygote->Start();
  if (!started.ok()) {
    spdlog::warn("warm python: not started ({}); trials start cold", started.message());
    return;
  }
  zygote_ = std::move(zygote);
}

int WarmLauncher::zygote_pid() {
  std::lock_guard<std::mutex> lock(mu_);
  return zygote_ && zygote_->ready() ? zygote_->pid() : 0;
}

Zygote* WarmLauncher::LiveZygote() {
  std::lock_guard<std::mutex> lock(mu_);
  if (zygote_ && zygote_->alive()) return zygote_.get();
  auto now = std::chrono::steady_clock::now();
  if (now - last_start_ < kRestartEvery) return nullptr;
  last_start_ = now;
  zygote_.reset();
  auto zygote = std::make_unique<Zygote>(options_, cold_.get());
  Status started = zygote->Start();
  if (!started.ok()) {
    spdlog::warn("warm python: restart failed: {}", started.message());
    return nullptr;
  }
  spdlog::info("warm python: restarted");
  zygote_ = std::move(zygote);
  return nullptr;  // not ready yet: this launch is cold
}

Result<std::unique_ptr<Process>> WarmLauncher::Launch(const LaunchSpec& spec,
                                                      OutputCallback on_output) {
  std::string why_cold;
  if (spec.warm) {
    Zygote* zygote = LiveZygote();
    std::string executable = ResolveProgram(spec.warm->argv[0], spec.env);
    Status env_ok = CheckZygoteEnvironment(spec.env, options_.env);
    // A zygote still importing is worth waiting for: a cold start would cost the same imports.
    if (zygote != nullptr && !zygote->ready()) {
      zygote->WaitReady(std::chrono::steady_clock::now() + std::chrono::seconds(5));
    }
    if (zygote == nullptr || !zygote->ready()) {
      why_cold = "the warm python is not ready";
    } else if (zygote_python_.empty() || RealPath(executable) != zygote_python_) {
      why_cold = spec.warm->argv[0] + " is not the warm interpreter " + options_.python;
    } else if (!env_ok.ok()) {
      why_cold = env_ok.message();
    } else {
      auto warm = zygote->Spawn(spec, *spec.warm, executable, on_output);
      if (warm.ok()) {
        warm_starts_.fetch_add(1);
        spdlog::info("allocation {}: warm start, pid {} forked by the warm python (pid {})",
                     EnvOr(spec.env, "DET_CONTAINER_ID"), (*warm)->pid(), zygote->pid());
        return warm;
      }
      why_cold = warm.status().message();
    }
    spdlog::info("allocation {}: cold start: {}", EnvOr(spec.env, "DET_CONTAINER_ID"), why_cold);
  }
  cold_starts_.fetch_add(1);
  return cold_->Launch(spec, std::move(on_output));
}

}  // namespace det::agent
