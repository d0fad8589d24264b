#include "agent/warm_python.h"

#include <algorithm>
#include <cctype>

namespace det::agent {
namespace {

bool PlainChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("_-./:=,+@%").find(c) != std::string_view::npos;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Whether the interpreter reads `key` from the environment while it starts.
bool StartupVariable(const std::string& key) {
  if (key == "PYTHONPATH") return false;
  return StartsWith(key, "PYTHON") || StartsWith(key, "LC_") || key == "LANG" ||
         key == "LANGUAGE" || key == "HOME";
}

std::string ValueOr(const std::map<std::string, std::string>& env, const std::string& key,
                    const std::string& fallback) {
  auto it = env.find(key);
  return it == env.end() ? fallback : it->second;
}

}  // namespace

std::optional<std::vector<std::string>> PlainShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else if (PlainChar(c)) {
      word.push_back(c);
    } else {
      return std::nullopt;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  if (words.empty()) return std::nullopt;
  // `VAR=value cmd` assigns in a shell; `~` and `%` at a word start are shell syntax.
  for (const auto& w : words) {
    if (w.front() == '%' || (w.find('=') != std::string::npos && &w == &words.front())) {
      return std::nullopt;
    }
  }
  return words;
}

bool IsPythonName(std::string_view basename) {
  if (basename == "python" || basename == "python3") return true;
  if (!StartsWith(basename, "python3.") || basename.size() == 8) return false;
  return std::all_of(basename.begin() + 8, basename.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

Result<WarmPythonPlan> PlanWarmPython(const std::vector<std::string>& entrypoint_argv,
                                      const std::map<std::string, std::string>& env) {
  std::string off = ValueOr(env, kWarmPythonEnv, "");
  std::transform(off.begin(), off.end(), off.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (off == "0" || off == "false" || off == "no" || off == "off") {
    return FailedPrecondition(std::string(kWarmPythonEnv) + "=" + ValueOr(env, kWarmPythonEnv, "") +
                              " turns the warm start off");
  }
  std::vector<std::string> argv = entrypoint_argv;
  if (argv.size() == 3 && argv[0] == "sh" && argv[1] == "-c") {
    auto words = PlainShellWords(argv[2]);
    if (!words) return FailedPrecondition("the entrypoint needs a shell: " + argv[2]);
    argv = std::move(*words);
  }
  if (argv.empty()) return FailedPrecondition("empty entrypoint");
  std::string_view program = argv[0];
  size_t slash = program.rfind('/');
  if (!IsPythonName(slash == std::string_view::npos ? program : program.substr(slash + 1))) {
    return FailedPrecondition("the entrypoint does not start python: " + argv[0]);
  }
  WarmPythonPlan plan;
  plan.argv = argv;
  size_t i = 1;
  while (i < argv.size() && argv[i] == "-u") ++i;  // unbuffered: trials always are
  if (i >= argv.size()) return FailedPrecondition("python without a script or -m module");
  if (argv[i] == "-m") {
    if (i + 1 >= argv.size() || argv[i + 1].empty() || argv[i + 1].front() == '-') {
      return FailedPrecondition("python -m without a module name");
    }
    plan.module = argv[i + 1];
    i += 2;
  } else if (argv[i].front() == '-') {
    return FailedPrecondition("python option " + argv[i] + " needs a cold start");
  } else {
    plan.script = argv[i];
    i += 1;
  }
  plan.args.assign(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
  return plan;
}

Status CheckZygoteEnvironment(const std::map<std::string, std::string>& trial_env,
                              const std::map<std::string, std::string>& zygote_env) {
  constexpr char kUnset[] = "\x01(unset)";
  for (const auto* env : {&trial_env, &zygote_env}) {
    for (const auto& [key, value] : *env) {
      if (!StartupVariable(key)) continue;
      std::string trial = ValueOr(trial_env, key, kUnset);
      std::string zygote = ValueOr(zygote_env, key, kUnset);
      if (trial != zygote) {
        auto show = [&](const std::string& v) { return v == kUnset ? "unset" : "\"" + v + "\""; };
        return FailedPrecondition(key + " is " + show(trial) + " for the trial but " +
                                  show(zygote) + " in the warm interpreter");
      }
    }
  }
  return Status::Ok();
}

}  // namespace det::agent
