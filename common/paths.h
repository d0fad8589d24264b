#pragma once
// Where the binaries find the Python package and interpreter they hand work to.

#include <string>

namespace det {

// The `harness` directory of this checkout, next to the running binary
// (<repo>/build/bin/<binary> -> <repo>/harness), canonicalized; "" when absent.
std::string HarnessDirNearExecutable();
// $DET_PYTHON_EXECUTABLE, else /usr/bin/python3 when it exists, else "python3".
std::string DefaultPythonExecutable();

}  // namespace det
