#pragma once
// The method-specific part of the `searcher` section: which fields each search method takes,
// which it requires, their rules and defaults (adaptive_asha, async_halving, adaptive,
// adaptive_simple, pbt, sync_halving, custom; single / random / grid take only common fields).
// Internal to master/config.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/config/problems.h"

namespace det::master::config::internal {

// The fields `method` accepts (common ones included, legacy step-era names too); empty for an
// unknown method.
std::vector<std::string_view> SearcherMethodFields(std::string_view method);

// Validates the method-specific fields of `in` (the user's section, legacy names already
// converted in `*out`) for `cfg->name`, fills their defaults into `*out` and `*cfg`.
// Records "searcher.<key>: must be > 0 ..." for a zero length map ({batches: 0}); Determined's
// schema wants searcher lengths positive. A unitless integer 0 passes.
void RequirePositiveLength(const std::optional<Length>& length, const nlohmann::json& value,
                           std::string_view key, Problems* problems);

void ParseSearcherMethod(const nlohmann::json& in, nlohmann::json* out, SearcherConfig* cfg,
                         Problems* problems);

}  // namespace det::master::config::internal
