#pragma once
// `det experiment create --local --test-mode CONFIG DIR`: runs the model definition's test mode
// on this machine, without a master, through the Python package
// (`python3 -m determined.exec.harness --test-mode --config CONFIG` in DIR).

#include <string>

#include "common/status.h"

namespace det::cli {

// Returns the process's exit status (0 when the test succeeded) or an error when it could not run.
Result<int> RunLocalTestMode(const std::string& config_text, const std::string& context_dir);

// The harness directory next to this binary (<bin>/../../harness), or "" when absent.
std::string HarnessPathNearExecutable();

}  // namespace det::cli
