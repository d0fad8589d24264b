#pragma once
// CSV as RFC 4180 writes it: a field is quoted only when it holds a comma, a quote or a line
// break, a quote doubled inside; "\n" ends each record. Missing cells (nullopt) are empty.

#include <optional>
#include <string>
#include <vector>

namespace det {

std::string CsvField(const std::string& s);
// One record, ending in "\n".
std::string CsvRecord(const std::vector<std::optional<std::string>>& cells);

}  // namespace det
