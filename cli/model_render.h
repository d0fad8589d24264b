#pragma once
// The tables and JSON of `det model`, as Determined's CLI prints them: Python's str() of the
// model's datetimes (`2024-01-02 03:04:05+00:00`: its SDK drops the sub-second part) and json.dumps(..., indent=N) of
// metadata and validation metrics.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/table.h"

namespace det::cli {

// `det model describe|create|register-version|list-versions`: one row for the model.
std::vector<std::string> ModelDescribeHeaders();
TableRow ModelDescribeRow(const nlohmann::json& model);

// `det model list`.
std::vector<std::string> ModelListHeaders();
TableRow ModelListRow(const nlohmann::json& model);

// A model version with its checkpoint.
std::vector<std::string> ModelVersionHeaders();
TableRow ModelVersionRow(const nlohmann::json& version);

// `--json` of list/describe/create: {name, id, description, creation_time, last_updated_time,
// metadata, archived} with times as Python's isoformat().
nlohmann::json ModelSummaryJson(const nlohmann::json& model);

// An RFC 3339 time as Python's str() of the datetime (`sep` " ") or isoformat() (`sep` "T");
// nullopt when missing, the input unchanged when it cannot be read.
std::optional<std::string> PythonDatetime(const nlohmann::json& rfc3339, char sep = ' ');

// json.dumps(value, indent=indent) (ASCII only, keys in the order given).
std::string PythonJsonDumps(const nlohmann::json& value, int indent);

std::string Upper(std::string text);

}  // namespace det::cli
