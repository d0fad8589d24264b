#pragma once
// Table rendering in the style of Python's `tabulate(..., tablefmt="presto")`, which
// Determined's CLI uses for every listing, and the CSV form (`--csv`).
//
// Presto rules reproduced here: a header row, a separator of dashes joined with `-+-`, columns
// separated by ` | `, each column as wide as its widest cell and at least its header plus 2;
// columns whose non-missing cells are all numbers are right-aligned (floats aligned on the
// decimal point), other columns left-aligned; headers follow their column's alignment; missing
// cells (nullopt, Python's None) are blank; trailing blanks are trimmed; a cell holding
// newlines spans several lines.

#include <optional>
#include <string>
#include <vector>

namespace det::cli {

using TableCell = std::optional<std::string>;  // nullopt = missing value
using TableRow = std::vector<TableCell>;

// Renders `rows` under `headers`; the result ends without a trailing newline.
std::string RenderPresto(const std::vector<std::string>& headers,
                         const std::vector<TableRow>& rows);

// Renders `rows` as CSV (minimal quoting, "\n" line ends, missing cells empty); ends in "\n".
std::string RenderCsv(const std::vector<std::string>& headers, const std::vector<TableRow>& rows);

// True if `text` reads as a number to tabulate (an int or a float, no surrounding blanks).
bool IsTableNumber(const std::string& text);

}  // namespace det::cli
