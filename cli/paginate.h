#pragma once
// Reading every page of a paginated list endpoint the way Determined's CLI does
// (`api.read_paginated`): keep asking while `pagination.endIndex < pagination.total`.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/session.h"
#include "common/status.h"

namespace det::cli {

// GETs `path` (which may already hold a query) with `offset` and `limit` added, page after page,
// and returns the concatenated `key` arrays. `max_pages` < 0 means every page.
Result<nlohmann::json> FetchPages(Session& session, const std::string& path,
                                  const std::string& key, int64_t offset = 0,
                                  int64_t limit = 1000, int64_t max_pages = -1);

}  // namespace det::cli
