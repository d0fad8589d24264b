#include "cli/proc_state.h"

namespace det::cli {

std::optional<char> StateFromProcStat(std::string_view stat_line) {
  // The command name may contain ')', so the state follows the last one.
  size_t close = stat_line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  size_t pos = stat_line.find_first_not_of(' ', close + 1);
  if (pos == std::string_view::npos || pos == close + 1) return std::nullopt;
  return stat_line[pos];
}

bool IsExitedState(char state) { return state == 'Z' || state == 'X' || state == 'x'; }

}  // namespace det::cli
