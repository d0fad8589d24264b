#pragma once
// RunProcess: runs a program to completion and captures its standard output (stderr is passed
// through to ours). For short helper tasks such as the checkpoint GC task.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace det {

struct ProcessResult {
  int exit_code = 0;       // 128 + N when killed by signal N
  std::string stdout_text;
};

// `env` entries are added to (or replace) the current environment.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& env = {});

}  // namespace det
