#include "common/csv.h"

namespace det {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out.push_back(c);
  }
  out += "\"";
  return out;
}

std::string CsvRecord(const std::vector<std::optional<std::string>>& cells) {
  std::string out;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) out += ",";
    if (cells[c].has_value()) out += CsvField(*cells[c]);
  }
  out += "\n";
  return out;
}

}  // namespace det
