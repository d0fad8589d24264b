#include "common/paths.h"

#include <cstdlib>
#include <filesystem>

namespace det {

std::string HarnessDirNearExecutable() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path harness = exe.parent_path().parent_path().parent_path() / "harness";
  if (!fs::is_directory(harness / "determined", ec)) return "";
  fs::path canonical = fs::canonical(harness, ec);
  return ec ? harness.string() : canonical.string();
}

std::string CliDirNearExecutable() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path det = exe.parent_path() / "det";
  if (!fs::is_regular_file(det, ec)) return "";
  fs::perms p = fs::status(det, ec).permissions();
  if (ec || (p & fs::perms::owner_exec) == fs::perms::none) return "";
  return exe.parent_path().string();
}

std::string DefaultPythonExecutable() {
  const char* env = std::getenv("DET_PYTHON_EXECUTABLE");
  if (env != nullptr && *env != '\0') return env;
  std::error_code ec;
  return std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}

}  // namespace det
