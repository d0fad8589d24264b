#include "cli/paginate.h"

#include <optional>

#include "cli/format.h"

namespace det::cli {

Result<nlohmann::json> FetchPages(Session& session, const std::string& path,
                                  const std::string& key, int64_t offset, int64_t limit,
                                  int64_t max_pages) {
  using json = nlohmann::json;
  json all = json::array();
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (int64_t page = 0; max_pages < 0 || page < max_pages; ++page) {
    DET_ASSIGN_OR_RETURN(json resp, session.Get(path + sep + "offset=" + std::to_string(offset) +
                                                 "&limit=" + std::to_string(limit)));
    json items = resp.value(key, json::array());
    if (!items.is_array()) break;
    for (json& item : items) all.push_back(std::move(item));
    json pagination = resp.value("pagination", json());
    if (!pagination.is_object() || items.empty()) break;
    std::optional<int64_t> end = JsonInt(pagination.value("endIndex", json()));
    std::optional<int64_t> total = JsonInt(pagination.value("total", json()));
    if (!end || !total || *end >= *total) break;
    offset = *end;
  }
  return all;
}

}  // namespace det::cli
