// Router, request helpers and query parsing of the HTTP server (no I/O).
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "master/server/http_server.h"

namespace det::master::server {

namespace {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Lenient, for query strings: a '%' without two hex digits stays as it is (Match refuses such a
// query before any handler reads it).
std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    // As unsigned char: isxdigit of a negative char (a byte over 0x7f) is undefined.
    if (s[i] == '%' && i + 2 < s.size() && isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Strict, for path parameters: every '%' starts two hex digits and nothing decodes to a NUL byte
// (C APIs and strtoll stop there: "1%00" read as id 1). '+' is a literal '+' in a path (RFC 3986;
// only form-encoded queries mean a space by it). Returns the problem, or nullopt.
std::optional<std::string> StrictPercentDecode(const std::string& s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    unsigned value = 0;
    const char* from = s.data() + i + 1;
    const char* to = s.data() + std::min(s.size(), i + 3);
    auto [end, ec] = std::from_chars(from, to, value, 16);
    if (to - from != 2 || ec != std::errc() || end != to) {
      return "malformed percent-escape at byte " + std::to_string(i);
    }
    if (value == 0) return "contains a NUL byte (%00)";
    out->push_back(static_cast<char>(value));
    i += 2;
  }
  return std::nullopt;
}

// The first problem of a raw query string ("a=1&b=%zz"), naming its parameter.
std::optional<std::string> QueryProblem(const std::string& query) {
  std::stringstream ss(query);
  std::string kv, decoded;
  while (std::getline(ss, kv, '&')) {
    std::string name = kv.substr(0, kv.find('='));
    if (auto problem = StrictPercentDecode(kv, &decoded)) {
      return "query parameter '" + name + "': " + *problem + " (got '" + kv + "')";
    }
  }
  return std::nullopt;
}

}  // namespace

std::string ErrorJson(int grpc_code, const std::string& reason, const std::string& message) {
  // Messages quote what the request sent, which need not be UTF-8: such bytes become U+FFFD.
  return nlohmann::json{{"error", {{"code", grpc_code}, {"reason", reason}, {"error", message}}}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string HttpRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::Query(const std::string& name, const std::string& fallback) const {
  auto it = query.find(name);
  return it == query.end() ? fallback : it->second;
}

std::vector<std::string> HttpRequest::QueryAll(const std::string& name) const {
  std::vector<std::string> out;
  auto [lo, hi] = query_all.equal_range(name);
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  if (out.empty() && query.count(name) != 0) out.push_back(query.at(name));
  return out;
}

std::multimap<std::string, std::string> ParseQueryAll(const std::string& query) {
  std::multimap<std::string, std::string> out;
  std::stringstream ss(query);
  std::string kv;
  while (std::getline(ss, kv, '&')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      out.emplace(PercentDecode(kv), "");
    } else {
      out.emplace(PercentDecode(kv.substr(0, eq)), PercentDecode(kv.substr(eq + 1)));
    }
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(const std::string& query) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : ParseQueryAll(query)) out[k] = v;  // a repeated key keeps its last value
  return out;
}

void Router::Add(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, SplitPath(pattern), std::move(handler)});
}

void Router::AddPrefix(const std::string& method, const std::string& prefix, Handler handler) {
  prefix_routes_.emplace_back(prefix, Route{method, {}, std::move(handler)});
}

std::vector<std::pair<std::string, std::string>> Router::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Route& r : routes_) {
    std::string pattern;
    for (const std::string& seg : r.segments) pattern += "/" + seg;
    out.emplace_back(r.method, pattern.empty() ? "/" : pattern);
  }
  for (const auto& [prefix, r] : prefix_routes_) out.emplace_back(r.method, prefix + "/{path}");
  return out;
}

void Router::ForEachRoute(
    const std::function<void(const std::string&, const std::string&, const Handler&)>& fn) const {
  for (const Route& r : routes_) {
    std::string pattern;
    for (const std::string& seg : r.segments) pattern += "/" + seg;
    fn(r.method, pattern.empty() ? "/" : pattern, r.handler);
  }
  for (const auto& [prefix, r] : prefix_routes_) fn(r.method, prefix + "/{path}", r.handler);
}

void Router::AddInline(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, SplitPath(pattern), std::move(handler), true});
}

RouteMatch Router::Match(HttpRequest& req) const {
  size_t q = req.target.find('?');
  if (q != std::string::npos) {
    if (auto problem = QueryProblem(req.target.substr(q + 1))) {
      return RouteMatch{nullptr, false, 400, *problem};
    }
  }
  std::vector<std::string> segs = SplitPath(req.path);
  bool path_matched = false;
  for (const Route& r : routes_) {
    if (r.segments.size() != segs.size()) continue;
    std::map<std::string, std::string> params;
    std::string bad_param;
    bool ok = true;
    for (size_t i = 0; i < segs.size() && ok; ++i) {
      const std::string& p = r.segments[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
        std::string name = p.substr(1, p.size() - 2);
        auto problem = StrictPercentDecode(segs[i], &params[name]);
        if (problem && bad_param.empty()) {
          bad_param = "path parameter '" + name + "': " + *problem + " (got '" + segs[i] + "')";
        }
      } else if (p != segs[i]) {
        ok = false;
      }
    }
    if (!ok) continue;
    path_matched = true;
    if (r.method != req.method) continue;
    if (!bad_param.empty()) return RouteMatch{nullptr, false, 400, bad_param};
    req.params = std::move(params);
    return RouteMatch{&r.handler, r.run_inline, 200, ""};
  }
  if (!path_matched) {
    for (const auto& [prefix, r] : prefix_routes_) {
      bool under = req.path == prefix || req.path.rfind(prefix + "/", 0) == 0;
      if (!under) continue;
      path_matched = true;
      if (r.method != req.method) continue;
      req.params.clear();
      return RouteMatch{&r.handler, false, 200, ""};
    }
  }
  return RouteMatch{nullptr, false, path_matched ? 405 : 404, ""};
}

HttpResponse Router::Run(const RouteMatch& match, HttpRequest& req) {
  if (match.handler != nullptr) return (*match.handler)(req);
  HttpResponse resp;
  resp.status = match.status;
  if (match.status == 400) {
    resp.body = ErrorJson(3, "InvalidArgument", match.error);
  } else {
    resp.body = match.status == 405 ? ErrorJson(12, "Unimplemented", "method not allowed")
                                    : ErrorJson(5, "NotFound", "not found");
  }
  return resp;
}

HttpResponse Router::Dispatch(HttpRequest& req) const {
  HttpResponse resp = Run(Match(req), req);
  if (resp.on_worker) {
    auto rest = std::move(resp.on_worker);
    // A synchronous caller (tests, fuzzing): an inline handler's OnWorker part runs here too.
    resp = rest();
  }
  return resp;
}

}  // namespace det::master::server
