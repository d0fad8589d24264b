#pragma once
// The smallest valid experiment config, and that config with a patch merged in: what the config
// rule tests start from.

#include <string>

#include <nlohmann/json.hpp>

namespace det::master::config::testing {

inline const nlohmann::json& BaseConfig() {
  static const nlohmann::json base = {
      {"entrypoint", "python3 train.py"},
      {"searcher", {{"name", "single"}, {"metric", "loss"}, {"max_length", {{"batches", 10}}}}}};
  return base;
}

// BaseConfig() with `patch` merged in (RFC 7386: null deletes a key), as JSON text.
inline std::string With(const nlohmann::json& patch) {
  nlohmann::json doc = BaseConfig();
  doc.merge_patch(patch);
  return doc.dump();
}

}  // namespace det::master::config::testing
