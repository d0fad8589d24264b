#pragma once
// WarmLauncher: starts python entrypoints as forks of the agent's warm interpreter (Zygote)
// when that gives exactly what a cold start would (warm_python.h), everything else, and every
// launch while the zygote is not ready, through the cold launcher. See docs/operations.md.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "agent/launcher/launcher.h"
#include "agent/launcher/zygote.h"

namespace det::agent {

class WarmLauncher : public Launcher {
 public:
  WarmLauncher(std::unique_ptr<Launcher> cold, ZygoteOptions options);
  ~WarmLauncher() override;

  void Start() override;
  Result<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                          OutputCallback on_output) override;

  // Launches that went through the zygote / the cold launcher.
  int64_t warm_starts() const { return warm_starts_.load(); }
  int64_t cold_starts() const { return cold_starts_.load(); }
  // The current zygote's pid once it is ready, else 0.
  int zygote_pid();

 private:
  // The zygote to use, starting a new one when the last died (at most every kRestartEvery).
  Zygote* LiveZygote();

  const std::unique_ptr<Launcher> cold_;
  const ZygoteOptions options_;
  std::string zygote_python_;  // realpath of the zygote's interpreter

  std::mutex mu_;
  std::unique_ptr<Zygote> zygote_;                      // guarded by mu_
  std::chrono::steady_clock::time_point last_start_{};  // guarded by mu_
  std::atomic<int64_t> warm_starts_{0};
  std::atomic<int64_t> cold_starts_{0};
};

}  // namespace det::agent
