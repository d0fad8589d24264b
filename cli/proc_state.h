#pragma once
// The scheduler state of a process as /proc/<pid>/stat reports it. `det deploy local` uses it to
// tell a live process from one that has exited: /proc/<pid>/cmdline cannot, because it also
// reads empty while a live process is in the middle of execve (its new address space has no
// arguments yet), which made a master that was just starting look dead.

#include <optional>
#include <string_view>

namespace det::cli {

// The state letter of a /proc/<pid>/stat line ("R", "S", "D", "Z", "X", ...): the first field
// after the command name, which is in parentheses and may itself hold spaces and ')'.
// nullopt when the line has no such field.
std::optional<char> StateFromProcStat(std::string_view stat_line);

// True for the states of a process that has exited and only waits to be reaped (zombie, dead).
bool IsExitedState(char state);

}  // namespace det::cli
