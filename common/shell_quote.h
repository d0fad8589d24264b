#pragma once
// Quoting a word for /bin/sh (job scripts, `sbatch --wrap`, a task's start command).

#include <string>

namespace det {

// `word` single-quoted so sh reads it back unchanged, whatever it holds.
std::string ShellQuote(const std::string& word);

}  // namespace det
