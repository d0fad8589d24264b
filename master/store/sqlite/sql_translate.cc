#include "master/store/sqlite/sql_translate.h"

#include <cctype>
#include <vector>

namespace det::master::store::sql {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Calls `code(text)` for each run of SQL outside quotes and comments and appends the rest
// unchanged.
template <typename F>
std::string MapCode(std::string_view sql, F code) {
  std::string out;
  size_t i = 0;
  size_t start = 0;
  auto flush = [&](size_t end) { out += code(sql.substr(start, end - start)); };
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '\'' || c == '"') {
      flush(i);
      size_t j = i + 1;
      while (j < sql.size()) {
        if (sql[j] == c) {
          if (j + 1 < sql.size() && sql[j + 1] == c) {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      j = j < sql.size() ? j + 1 : j;
      out += sql.substr(i, j - i);
      i = start = j;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      flush(i);
      size_t j = sql.find('\n', i);
      j = j == std::string_view::npos ? sql.size() : j;
      out += sql.substr(i, j - i);
      i = start = j;
    } else {
      ++i;
    }
  }
  flush(sql.size());
  return out;
}

bool WordAt(std::string_view s, size_t i, std::string_view word) {
  if (i + word.size() > s.size()) return false;
  if (i > 0 && IsWordChar(s[i - 1])) return false;
  if (i + word.size() < s.size() && IsWordChar(s[i + word.size()])) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (std::toupper(static_cast<unsigned char>(s[i + k])) != word[k]) return false;
  }
  return true;
}

// Replaces whole words (case-insensitive, `from` in upper case) in code.
std::string ReplaceWords(std::string_view code,
                         const std::vector<std::pair<std::string_view, std::string_view>>& map) {
  std::string out;
  size_t i = 0;
  while (i < code.size()) {
    bool done = false;
    for (const auto& [from, to] : map) {
      if (WordAt(code, i, from)) {
        out += to;
        i += from.size();
        done = true;
        break;
      }
    }
    if (!done) out += code[i++];
  }
  return out;
}

// Collapses runs of whitespace to one space (for matching multi-word phrases).
std::string ReplacePhrase(std::string_view code, std::vector<std::string_view> words,
                          std::string_view to) {
  std::string out;
  size_t i = 0;
  while (i < code.size()) {
    size_t j = i;
    bool match = true;
    for (size_t w = 0; w < words.size(); ++w) {
      if (w > 0) {
        size_t k = j;
        while (k < code.size() && std::isspace(static_cast<unsigned char>(code[k]))) ++k;
        if (k == j) {
          match = false;
          break;
        }
        j = k;
      }
      if (!WordAt(code, j, words[w])) {
        match = false;
        break;
      }
      j += words[w].size();
    }
    if (match) {
      out += to;
      i = j;
    } else {
      out += code[i++];
    }
  }
  return out;
}

}  // namespace

std::string TranslatePlaceholders(std::string_view sql, int* params) {
  int next = 0;
  int highest = 0;
  std::string out = MapCode(sql, [&](std::string_view code) {
    std::string o;
    for (size_t i = 0; i < code.size(); ++i) {
      if (code[i] != '?') {
        o += code[i];
        continue;
      }
      size_t j = i + 1;
      while (j < code.size() && std::isdigit(static_cast<unsigned char>(code[j]))) ++j;
      int n = j > i + 1 ? std::stoi(std::string(code.substr(i + 1, j - i - 1))) : ++next;
      if (j > i + 1) next = n;  // SQLite: a bare ? after ?N is N + 1
      highest = std::max(highest, n);
      o += "$" + std::to_string(n);
      i = j - 1;
    }
    return o;
  });
  *params = highest;
  return out;
}

std::string TranslateDdl(std::string_view sql) {
  return MapCode(sql, [](std::string_view code) {
    std::string s = ReplacePhrase(code, {"INTEGER", "PRIMARY", "KEY", "AUTOINCREMENT"},
                                  "BIGSERIAL PRIMARY KEY");
    return ReplaceWords(s,
                        {{"INTEGER", "BIGINT"}, {"REAL", "DOUBLE PRECISION"}, {"BLOB", "BYTEA"}});
  });
}

}  // namespace det::master::store::sql
