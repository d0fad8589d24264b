#include "master/config/length_parse.h"

namespace det::master::config::internal {

namespace {

struct UnitKey {
  const char* key;
  Length::Unit unit;
};
constexpr UnitKey kUnitKeys[] = {
    {"batches", Length::Unit::kBatches},
    {"records", Length::Unit::kRecords},
    {"epochs", Length::Unit::kEpochs},
};

std::optional<uint64_t> NonNegative(const nlohmann::json& v, std::string_view path,
                                    Problems* problems) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i >= 0) return static_cast<uint64_t>(i);
    problems->Add(path, "must be >= 0", v);
    return std::nullopt;
  }
  problems->Add(path, "must be an integer", v);
  return std::nullopt;
}

}  // namespace

const char* LengthUnitName(Length::Unit unit) {
  switch (unit) {
    case Length::Unit::kBatches: return "batches";
    case Length::Unit::kRecords: return "records";
    case Length::Unit::kEpochs: return "epochs";
    case Length::Unit::kUnitless: return "unitless";
  }
  return "unitless";
}

std::optional<Length> ParseLength(const nlohmann::json& value, std::string_view path,
                                  bool allow_unitless, Problems* problems) {
  if (value.is_number_integer() && allow_unitless) {
    auto n = NonNegative(value, path, problems);
    if (!n) return std::nullopt;
    return Length{Length::Unit::kUnitless, *n};
  }
  if (!value.is_object()) {
    problems->Add(path,
                  allow_unitless ? "must be an integer or one of {batches, records, epochs}"
                                 : "must be one of {batches, records, epochs}",
                  value);
    return std::nullopt;
  }
  std::optional<Length> found;
  int units = 0;
  bool ok = true;
  for (const auto& [key, v] : value.items()) {
    const UnitKey* match = nullptr;
    for (const UnitKey& u : kUnitKeys) {
      if (key == u.key) match = &u;
    }
    if (match == nullptr) {
      problems->Add(JoinPath(path, key), "unknown field");
      ok = false;
      continue;
    }
    ++units;
    auto n = NonNegative(v, JoinPath(path, key), problems);
    if (!n) {
      ok = false;
      continue;
    }
    found = Length{match->unit, *n};
  }
  if (units != 1) {
    problems->Add(path, "must set exactly one of batches, records, epochs", value);
    return std::nullopt;
  }
  if (!ok) return std::nullopt;
  return found;
}

nlohmann::json LengthToJson(const Length& length) {
  if (length.unit == Length::Unit::kUnitless) return nlohmann::json(length.value);
  return nlohmann::json{{LengthUnitName(length.unit), length.value}};
}

}  // namespace det::master::config::internal
