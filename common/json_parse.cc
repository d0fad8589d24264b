#include "common/json_parse.h"

#include <string>

namespace det {

namespace {

struct TooDeep {};

}  // namespace

Result<nlohmann::json> ParseJsonBounded(std::string_view text, std::string_view what,
                                        int max_depth) {
  using nlohmann::json;
  // The callback sees each container open before it is built; `depth` counts the open ones
  // around it. Throwing stops the parse there, so a 100 MB run of '[' costs max_depth steps.
  json::parser_callback_t bound = [max_depth](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start ||
         event == json::parse_event_t::array_start) &&
        depth >= max_depth) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    json j = json::parse(text.begin(), text.end(), bound, /*allow_exceptions=*/false);
    if (j.is_discarded()) return InvalidArgument(std::string(what) + " is not valid JSON");
    return j;
  } catch (const TooDeep&) {
    return InvalidArgument(std::string(what) + " nesting exceeds " + std::to_string(max_depth) +
                           " levels");
  }
}

}  // namespace det
