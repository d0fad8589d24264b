#include "cli/table.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/csv.h"

namespace det::cli {
namespace {

constexpr size_t kMinHeaderPadding = 2;  // tabulate's MIN_PADDING

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find('\n', start);
    if (pos == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

// Display width: counts UTF-8 code points rather than bytes.
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string PadLeft(const std::string& s, size_t width) {
  size_t w = Width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string PadRight(const std::string& s, size_t width) {
  size_t w = Width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

bool IsInt(const std::string& text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

// Digits after the decimal point (or exponent), -1 for integers, as tabulate's `_afterpoint`.
int AfterPoint(const std::string& s) {
  if (IsInt(s)) return -1;
  size_t pos = s.rfind('.');
  if (pos == std::string::npos) {
    pos = s.find_last_of("eE");
  }
  if (pos == std::string::npos) return -1;
  return static_cast<int>(s.size() - pos - 1);
}

std::string StripRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

}  // namespace

bool IsTableNumber(const std::string& text) {
  if (text.empty()) return false;
  if (std::isspace(static_cast<unsigned char>(text.front())) ||
      std::isspace(static_cast<unsigned char>(text.back()))) {
    return false;
  }
  if (IsInt(text)) return true;
  std::string lower;
  for (char c : text) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower.find('x') != std::string::npos) return false;  // no hex floats
  if (lower.find("inf") != std::string::npos || lower.find("nan") != std::string::npos) {
    return lower == "inf" || lower == "-inf" || lower == "+inf" || lower == "nan";
  }
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end != nullptr && *end == '\0';
}

std::string RenderPresto(const std::vector<std::string>& headers,
                         const std::vector<TableRow>& rows) {
  size_t ncols = headers.size();
  for (const TableRow& r : rows) ncols = std::max(ncols, r.size());

  // Column types and decimal alignment.
  std::vector<bool> numeric(ncols, false);
  std::vector<int> max_after(ncols, -1);
  for (size_t c = 0; c < ncols; ++c) {
    bool any = false;
    bool all_numbers = true;
    for (const TableRow& r : rows) {
      if (c >= r.size() || !r[c].has_value()) continue;
      any = true;
      if (!IsTableNumber(*r[c])) {
        all_numbers = false;
        break;
      }
      max_after[c] = std::max(max_after[c], AfterPoint(*r[c]));
    }
    numeric[c] = any && all_numbers;
  }

  // Cells as lines, numbers padded on the right so that decimal points line up.
  std::vector<std::vector<std::vector<std::string>>> cells(rows.size());
  std::vector<size_t> widths(ncols, 0);
  for (size_t c = 0; c < ncols; ++c) {
    std::string h = c < headers.size() ? headers[c] : "";
    for (const std::string& line : SplitLines(h)) {
      widths[c] = std::max(widths[c], Width(line) + kMinHeaderPadding);
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    cells[i].resize(ncols);
    for (size_t c = 0; c < ncols; ++c) {
      std::string text;
      if (c < rows[i].size() && rows[i][c].has_value()) text = *rows[i][c];
      if (numeric[c] && !text.empty()) {
        int after = AfterPoint(text);
        text += std::string(static_cast<size_t>(max_after[c] - after), ' ');
      }
      cells[i][c] = SplitLines(text);
      for (const std::string& line : cells[i][c]) widths[c] = std::max(widths[c], Width(line));
    }
  }

  auto align = [&](const std::string& s, size_t c) {
    return numeric[c] ? PadLeft(s, widths[c]) : PadRight(s, widths[c]);
  };

  std::string out;
  // Header (possibly multi-line).
  std::vector<std::vector<std::string>> header_lines(ncols);
  size_t header_height = 1;
  for (size_t c = 0; c < ncols; ++c) {
    header_lines[c] = SplitLines(c < headers.size() ? headers[c] : "");
    header_height = std::max(header_height, header_lines[c].size());
  }
  auto emit_row = [&](const std::vector<std::vector<std::string>>& row, size_t height) {
    for (size_t l = 0; l < height; ++l) {
      std::string line;
      for (size_t c = 0; c < ncols; ++c) {
        if (c > 0) line += "|";
        std::string text = l < row[c].size() ? row[c][l] : "";
        line += " " + align(text, c) + " ";
      }
      out += StripRight(line);
      out += "\n";
    }
  };
  emit_row(header_lines, header_height);
  std::string sep;
  for (size_t c = 0; c < ncols; ++c) {
    if (c > 0) sep += "+";
    sep += std::string(widths[c] + 2, '-');
  }
  out += sep;
  for (const auto& row : cells) {
    size_t height = 1;
    for (const auto& cell : row) height = std::max(height, cell.size());
    out += "\n";
    emit_row(row, height);
    out.pop_back();
  }
  return out;
}

std::string RenderCsv(const std::vector<std::string>& headers, const std::vector<TableRow>& rows) {
  std::string out = CsvRecord({headers.begin(), headers.end()});
  for (const TableRow& r : rows) out += CsvRecord(r);
  return out;
}

}  // namespace det::cli
