#include "master/api/route_helpers.h"

#include "master/api/json_views.h"

#include <spdlog/spdlog.h>

namespace det::master::api {

using nlohmann::json;

namespace {

std::string BearerToken(const std::string& header) {
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) == 0) return header.substr(prefix.size());
  return header;
}

std::string CookieToken(const std::string& cookies) {
  size_t pos = cookies.find("auth=");
  if (pos == std::string::npos) return "";
  size_t end = cookies.find(';', pos);
  return cookies.substr(pos + 5, end == std::string::npos ? std::string::npos : end - pos - 5);
}

// Free-form objects whose nulls are values (a user's metadata, reported metrics), not unset fields.
bool IsFreeFormKey(const std::string& key) {
  return key == "metadata" || key == "metrics" || key == "hparams" || key == "settings";
}

server::HttpResponse Guarded(const std::function<server::HttpResponse()>& fn) {
  try {
    return fn();
  } catch (const json::exception& e) {
    return ErrorResponse(InvalidArgument(std::string("malformed request: ") + e.what()));
  }
}

}  // namespace

server::Handler WithAuth(server::Master* master, Auth auth, AuthedHandler handler) {
  return [master, auth, handler](server::HttpRequest& req) -> server::HttpResponse {
    std::string alloc_token = req.Header("grpc-metadata-x-allocation-token");
    if (alloc_token.empty()) alloc_token = req.Header("x-allocation-token");
    std::string user_token = BearerToken(req.Header("authorization"));
    if (user_token.empty()) user_token = CookieToken(req.Header("cookie"));
    Result<server::Principal> who = Unauthenticated("token missing");
    if (!alloc_token.empty() && auth == Auth::kUserOrAllocation) {
      who = master->auth()->AuthenticateAllocationToken(BearerToken(alloc_token));
    } else if (!user_token.empty()) {
      who = master->auth()->AuthenticateUserToken(user_token);
    } else if (!alloc_token.empty()) {
      who = PermissionDenied("allocation tokens may not call this endpoint");
    }
    if (!who.ok()) return ErrorResponse(who.status());
    return Guarded([&] { return handler(req, *who); });
  };
}

server::Handler IdAction(server::Master* master, std::function<Status(int64_t)> action) {
  return WithAuth(master, Auth::kUser, [action](server::HttpRequest& req, const server::Principal&) {
    Result<int64_t> id = PathId(req, "id");
    if (!id.ok()) return ErrorResponse(id.status());
    Status st = action(*id);
    return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
  });
}

server::Handler NoAuth(std::function<server::HttpResponse(server::HttpRequest&)> handler) {
  return [handler](server::HttpRequest& req) { return Guarded([&] { return handler(req); }); };
}

server::HttpResponse JsonResponse(const json& body, int status) {
  server::HttpResponse resp;
  resp.status = status;
  resp.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return resp;
}

void DropNullFields(json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
        continue;
      }
      if (!IsFreeFormKey(it.key())) DropNullFields(*it);
      ++it;
    }
  } else if (j.is_array()) {
    for (auto& e : j) DropNullFields(e);
  }
}

Result<json> ParseBody(const server::HttpRequest& req) {
  if (req.body.empty()) return json::object();
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("request body is not valid JSON");
  DropNullFields(j);
  return j;
}

const json* Field(const json& obj, const char* camel, const char* snake) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(camel);
  if (it != obj.end() && !it->is_null()) return &*it;
  it = obj.find(snake);
  if (it != obj.end() && !it->is_null()) return &*it;
  return nullptr;
}

Result<int64_t> PathId(const server::HttpRequest& req, const char* name) {
  auto it = req.params.find(name);
  if (it == req.params.end()) return InvalidArgument(std::string(name) + ": missing");
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || v <= 0) {
    return InvalidArgument(std::string(name) + ": must be a positive integer (got '" + it->second +
                           "')");
  }
  return static_cast<int64_t>(v);
}

Result<int64_t> QueryInt(const server::HttpRequest& req, const char* name, int64_t fallback) {
  std::string v = req.Query(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0') {
    return InvalidArgument(std::string(name) + ": must be an integer (got '" + v + "')");
  }
  return static_cast<int64_t>(n);
}

bool QueryBool(const server::HttpRequest& req, const char* name, bool fallback) {
  std::string v = req.Query(name);
  if (v.empty()) return fallback;
  return v == "true" || v == "1";
}

Result<json> Paginate(const server::HttpRequest& req, const json& items, const char* key) {
  DET_ASSIGN_OR_RETURN(int64_t offset, QueryInt(req, "offset", 0));
  DET_ASSIGN_OR_RETURN(int64_t limit, QueryInt(req, "limit", 0));
  if (offset < 0) return InvalidArgument("offset: must be >= 0 (got " + std::to_string(offset) + ")");
  int64_t total = static_cast<int64_t>(items.size());
  json page = json::array();
  for (int64_t i = offset; i < total && (limit <= 0 || i < offset + limit); ++i) {
    page.push_back(items[i]);
  }
  int64_t count = static_cast<int64_t>(page.size());
  return json{{key, std::move(page)}, {"pagination", PaginationJson(offset, limit, count, total)}};
}

}  // namespace det::master::api
