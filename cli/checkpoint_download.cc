#include "cli/checkpoint_download.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cli/format.h"
#include "cli/local_test_mode.h"
#include "common/archive.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string PythonExecutable() {
  const char* env = std::getenv("DET_PYTHON_EXECUTABLE");
  if (env && *env) return env;
  std::error_code ec;
  return fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}

std::string Tail(const std::string& text, size_t n) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.size() > n ? "..." + t.substr(t.size() - n) : t;
}

// Runs the direct-download helper; its stdout and stderr are captured for error messages.
Status DownloadDirect(const json& storage, const std::string& uuid, const std::string& target) {
  std::string python = PythonExecutable();
  std::string harness = HarnessPathNearExecutable();
  std::vector<std::string> args = {python, "-m", "determined.common.checkpoint_download",
                                   "--storage-config", storage.dump(), "--uuid", uuid,
                                   "-o", target};
  int fds[2];
  if (pipe(fds) != 0) return Internal("cannot create a pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Internal("cannot fork");
  }
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[1]);
    if (!harness.empty()) {
      const char* old = std::getenv("PYTHONPATH");
      std::string path = old && *old ? harness + ":" + old : harness;
      setenv("PYTHONPATH", path.c_str(), 1);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return Unavailable("cannot run " + python + " for a direct download");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    return NotFound("checkpoint " + uuid + " not found in its storage: " + Tail(output, 500));
  }
  return Internal("direct download of checkpoint " + uuid + " failed: " + Tail(output, 500));
}

Status DownloadViaMaster(Session& session, const std::string& uuid, const std::string& target) {
  DET_ASSIGN_OR_RETURN(std::string data,
                       session.GetBytes("/checkpoints/" + uuid, "application/gzip"));
  std::error_code ec;
  fs::create_directories(target, ec);
  if (ec) return Internal("cannot create " + target + ": " + ec.message());
  return ExtractTarGz(data, target);
}

}  // namespace

Result<DownloadMode> ParseDownloadMode(const std::string& text) {
  if (text == "direct") return DownloadMode::kDirect;
  if (text == "master") return DownloadMode::kMaster;
  if (text == "auto") return DownloadMode::kAuto;
  return InvalidArgument("--mode must be one of direct, master, auto; not '" + text + "'");
}

std::string DownloadTarget(const std::string& uuid, const std::optional<std::string>& output) {
  return output ? *output : (fs::path("checkpoints") / uuid).string();
}

bool HoldsCheckpoint(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir) / "metadata.json", ec) ||
         fs::exists(fs::path(dir) / "MLmodel", ec);
}

Result<json> DownloadableStorage(const json& checkpoint) {
  std::string state = JsonString(checkpoint, "state");
  if (state != "STATE_COMPLETED" && state != "STATE_PARTIALLY_DELETED") {
    if (state.empty()) {
      return FailedPrecondition(
          "Checkpoint state is unknown. Please call Checkpoint.reload to refresh.");
    }
    return FailedPrecondition(
        "Only COMPLETED or PARTIALLY_DELETED checkpoints can be downloaded. Checkpoint state: " +
        state);
  }
  json training = checkpoint.value("training", json());
  if (!training.is_object()) {
    return Unimplemented("Non-training checkpoints cannot be downloaded");
  }
  json config = training.value("experimentConfig", json());
  json storage = config.is_object() ? config.value("checkpoint_storage", json()) : json();
  if (!storage.is_object() || !storage.contains("type")) {
    return FailedPrecondition("the checkpoint's experiment config has no checkpoint_storage");
  }
  return storage;
}

Result<std::string> DownloadCheckpoint(Session& session, const json& checkpoint,
                                       const std::optional<std::string>& output,
                                       DownloadMode mode) {
  DET_ASSIGN_OR_RETURN(json storage, DownloadableStorage(checkpoint));
  std::string uuid = JsonString(checkpoint, "uuid");
  std::string target = DownloadTarget(uuid, output);
  if (!HoldsCheckpoint(target)) {
    if (mode == DownloadMode::kDirect) {
      DET_RETURN_IF_ERROR(DownloadDirect(storage, uuid, target));
    } else if (mode == DownloadMode::kMaster) {
      DET_RETURN_IF_ERROR(DownloadViaMaster(session, uuid, target));
    } else {
      Status direct = DownloadDirect(storage, uuid, target);
      if (!direct.ok()) {
        if (JsonString(storage, "type") == "azure") return direct;
        Status via_master = DownloadViaMaster(session, uuid, target);
        if (!via_master.ok()) {
          return Status(via_master.code(),
                        "Auto checkpoint download mode was enabled. Attempted direct download "
                        "and proxied download through master but they both failed. (direct: " +
                            direct.message() + "; master: " + via_master.message() + ")");
        }
      }
    }
  }
  fs::path metadata_path = fs::path(target) / "metadata.json";
  std::error_code ec;
  if (!fs::exists(metadata_path, ec)) {
    fs::create_directories(target, ec);
    std::ofstream out(metadata_path);
    json metadata = checkpoint.value("metadata", json::object());
    out << (metadata.is_object() ? metadata : json::object()).dump(2);
    if (!out) return Internal("cannot write " + metadata_path.string());
  }
  return target;
}

}  // namespace det::cli
