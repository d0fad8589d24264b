#pragma once
// JSON text from outside the process (request bodies) parsed with its nesting bounded.
// nlohmann's parser is iterative, but dump(), copies, comparisons and every walk of ours recurse
// once per level, so a document deeper than any real one is refused before it is built.

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace det {

// Deeper than any config, metric report or API body; far below what a thread's stack survives.
inline constexpr int kMaxJsonDepth = 256;

// Parses `text`; `what` names it in the error: "<what> is not valid JSON" or
// "<what> nesting exceeds <max_depth> levels" (kInvalidArgument). A scalar is depth 0, `[]` 1.
Result<nlohmann::json> ParseJsonBounded(std::string_view text, std::string_view what,
                                        int max_depth = kMaxJsonDepth);

}  // namespace det
