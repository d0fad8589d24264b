#pragma once
// Pure rules of the warm-Python start (docs/operations.md, "Warm Python"): which entrypoints a
// forked child of the agent's zygote (harness/determined/exec/zygote.py) can run exactly as a
// cold `python3 ...` would, and which environments the zygote's interpreter matches.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace det::agent {

// Set on the zygote (value: the agent's data dir). Forked children keep the zygote's initial
// environment in /proc/<pid>/environ, so orphan cleanup finds them by this marker.
inline constexpr char kZygoteMarkerEnv[] = "DET_AGENT_ZYGOTE";
// "0" / "false" / "no" in a trial's environment (environment_variables) turns the warm path
// off for that trial.
inline constexpr char kWarmPythonEnv[] = "DET_WARM_PYTHON";

// A `python [-u] script.py args...` or `python [-u] -m module args...` command line.
struct WarmPythonPlan {
  std::vector<std::string> argv;  // the cold command line; argv[0] the interpreter as written
  std::string module;             // set for -m
  std::string script;             // set otherwise
  std::vector<std::string> args;  // after the script or module
};

// `sh -c TEXT` where TEXT is plain words (letters, digits, `_-./:=,+@%`, separated by blanks)
// is the argv of those words; anything a shell would interpret (quotes, `$`, globs,
// redirections, `;`, `&&`...) yields nullopt.
std::optional<std::vector<std::string>> PlainShellWords(std::string_view text);

// The plan for an entrypoint argv (after BuildEntrypointArgv), or FailedPrecondition saying why
// it needs a cold start. `env` is the trial's full environment (kWarmPythonEnv turns it off).
Result<WarmPythonPlan> PlanWarmPython(const std::vector<std::string>& entrypoint_argv,
                                      const std::map<std::string, std::string>& env);

// True for python, python3, python3.11 (a basename).
bool IsPythonName(std::string_view basename);

// The interpreter decides these at start-up (hash seed, locale, flags, user site, home...): a
// trial whose value of any differs from the zygote's needs a cold start. PYTHONPATH is not one
// of them (the child rebuilds sys.path from the trial's).
Status CheckZygoteEnvironment(const std::map<std::string, std::string>& trial_env,
                              const std::map<std::string, std::string>& zygote_env);

}  // namespace det::agent
