#pragma once
// Where the binaries find the Python package and interpreter they hand work to.

#include <string>

namespace det {

// The `harness` directory of this checkout, next to the running binary
// (<repo>/build/bin/<binary> -> <repo>/harness), canonicalized; "" when absent.
std::string HarnessDirNearExecutable();
// The directory of the running binary when it also holds an executable `det` (the CLI built
// beside the agent), so tasks can call it; "" otherwise.
std::string CliDirNearExecutable();
// $DET_PYTHON_EXECUTABLE, else /usr/bin/python3 when it exists, else "python3".
std::string DefaultPythonExecutable();

}  // namespace det
