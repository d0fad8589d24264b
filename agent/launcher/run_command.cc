#include "agent/launcher/run_command.h"

#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

namespace det::agent {

CommandResult RunCommand(Launcher& launcher, const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout) {
  CommandResult result;
  std::mutex out_mu;
  LaunchSpec spec;
  spec.argv = argv;
  spec.env = env;
  auto launched = launcher.Launch(spec, [&](StdType, std::string_view data) {
    std::lock_guard<std::mutex> lock(out_mu);
    if (result.output.size() < (1 << 20)) result.output.append(data);
  });
  if (!launched.ok()) {
    result.output = launched.status().message();
    return result;
  }
  std::unique_ptr<Process> process = std::move(launched).value();
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, timeout, [&] { return done; })) (void)process->Signal(SIGKILL);
  });
  int code = process->Wait();
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  std::lock_guard<std::mutex> lock(out_mu);
  result.exit_code = code;
  return result;
}

}  // namespace det::agent
