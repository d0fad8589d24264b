#include <algorithm>
#include <cctype>
#include <charconv>
#include <csignal>
#include <utility>

#include "agent/launcher/launcher.h"

namespace det::agent {

Result<int> ParseSignal(const std::string& name) {
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT},   {"KILL", SIGKILL},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},   {"CONT", SIGCONT},
      {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"WINCH", SIGWINCH}, {"ALRM", SIGALRM},
  };
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (ec == std::errc() && ptr == name.data() + name.size() && n > 0 && n < 65) return n;
    return InvalidArgument("bad signal " + name);
  }
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
  for (const auto& [n, v] : kSignals) {
    if (upper == n) return v;
  }
  return InvalidArgument("unknown signal " + name);
}

}  // namespace det::agent
