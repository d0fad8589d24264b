#include "cli/local_test_mode.h"

#include "common/paths.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace det::cli {

namespace fs = std::filesystem;

std::string HarnessPathNearExecutable() { return HarnessDirNearExecutable(); }

Result<int> RunLocalTestMode(const std::string& config_text, const std::string& context_dir) {
  std::error_code ec;
  if (!fs::is_directory(context_dir, ec)) {
    return InvalidArgument("CONTEXT_DIR: not a directory: " + context_dir);
  }
  fs::path config_path = fs::temp_directory_path() / ("det-local-test-" + std::to_string(getpid()) + ".yaml");
  {
    std::ofstream out(config_path);
    out << config_text;
    if (!out) return Internal("cannot write " + config_path.string());
  }
  std::string python = DefaultPythonExecutable();
  std::string harness = HarnessPathNearExecutable();
  pid_t pid = fork();
  if (pid < 0) return Internal("cannot fork");
  if (pid == 0) {
    if (chdir(context_dir.c_str()) != 0) _exit(127);
    if (!harness.empty()) {
      const char* old = std::getenv("PYTHONPATH");
      std::string path = old && *old ? harness + ":" + old : harness;
      setenv("PYTHONPATH", path.c_str(), 1);
    }
    std::vector<std::string> args = {python, "-m", "determined.exec.harness", "--test-mode",
                                      "--config", config_path.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  fs::remove(config_path, ec);
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 127) return Unavailable("cannot run " + python);
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace det::cli
