#include "cli/session.h"

#include <cstdlib>

#include "cli/password.h"

namespace det::cli {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return std::nullopt;
  return std::string(v);
}

StatusCode CodeFromHttp(long status) {
  switch (status) {
    case 400: return StatusCode::kInvalidArgument;
    case 401: return StatusCode::kUnauthenticated;
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kNotFound;
    case 409: return StatusCode::kAlreadyExists;
    case 501: return StatusCode::kUnimplemented;
    case 503: return StatusCode::kUnavailable;
    default: return StatusCode::kInternal;
  }
}

std::string ErrorMessageFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return "";
  auto err = j.find("error");
  if (err == j.end()) return "";
  if (err->is_string()) return err->get<std::string>();
  if (err->is_object()) {
    for (const char* key : {"error", "message", "reason"}) {
      auto it = err->find(key);
      if (it != err->end() && it->is_string() && !it->get<std::string>().empty()) {
        return it->get<std::string>();
      }
    }
  }
  auto msg = j.find("message");
  if (msg != j.end() && msg->is_string()) return msg->get<std::string>();
  return err->dump();
}

}  // namespace

AuthEnv AuthEnv::FromEnvironment() {
  return AuthEnv{Env("DET_USER"), Env("DET_USER_TOKEN"), Env("DET_PASS")};
}

Status StatusFromHttp(const HttpResponse& resp) {
  if (resp.status >= 200 && resp.status < 300) return Status::Ok();
  nlohmann::json j = nlohmann::json::parse(resp.body, nullptr, /*allow_exceptions=*/false);
  std::string msg = ErrorMessageFromJson(j);
  if (msg.empty()) {
    std::string body = resp.body;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    msg = "HTTP " + std::to_string(resp.status) + (body.empty() ? "" : ": " + body);
  }
  return Status(CodeFromHttp(resp.status), msg);
}

Result<nlohmann::json> ParseJsonBody(const std::string& body) {
  if (body.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Internal("the master answered with invalid JSON: " + body.substr(0, 200));
  return j;
}

Session::Session(std::string master_url, std::optional<std::string> requested_user, AuthEnv env,
                 std::string auth_cache_path)
    : master_url_(std::move(master_url)),
      requested_user_(std::move(requested_user)),
      env_(std::move(env)),
      cache_(std::move(auth_cache_path)),
      http_(master_url_),
      http_noauth_(master_url_) {
  if (!requested_user_ && env_.user) requested_user_ = env_.user;
  cache_.Load();
}

Result<HttpResponse> Session::Send(const std::string& method, const std::string& path,
                                   const std::string& body, long timeout_seconds, bool auth) {
  HttpClient& http = (auth && token_) ? http_ : http_noauth_;
  if (auth && token_) http_.SetHeader("Authorization", "Bearer " + *token_);
  Result<HttpResponse> resp = http.Request(method, path, body, timeout_seconds);
  if (!resp.ok()) {
    return Unavailable("could not reach the master at " + master_url_ + " (" +
                       resp.status().message() + ")");
  }
  return resp;
}

Result<nlohmann::json> Session::GetUnauthenticated(const std::string& path) {
  DET_ASSIGN_OR_RETURN(HttpResponse resp, Send("GET", path, "", 30, /*auth=*/false));
  DET_RETURN_IF_ERROR(StatusFromHttp(resp));
  return ParseJsonBody(resp.body);
}

Result<std::string> Session::DoLogin(const std::string& user, const std::string& password) {
  nlohmann::json body = {
      {"username", user}, {"password", HashPasswordForLogin(password)}, {"isHashed", true}};
  DET_ASSIGN_OR_RETURN(HttpResponse resp,
                       Send("POST", "/api/v1/auth/login", body.dump(), 30, /*auth=*/false));
  DET_RETURN_IF_ERROR(StatusFromHttp(resp));
  DET_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonBody(resp.body));
  if (!j.contains("token") || !j["token"].is_string()) {
    return Internal("the login answer has no token");
  }
  return j["token"].get<std::string>();
}

Status Session::EnsureToken() {
  if (token_) return Status::Ok();
  if (env_.token) {
    token_ = env_.token;
    username_ = requested_user_;
    token_from_cache_ = false;
    return Status::Ok();
  }
  std::optional<std::string> user = requested_user_;
  if (!user) user = cache_.ActiveUser(master_url_);
  if (!user) user = "determined";  // the user Determined's CLI falls back to
  if (std::optional<std::string> cached = cache_.Token(master_url_, *user)) {
    token_ = cached;
    username_ = user;
    token_from_cache_ = true;
    return Status::Ok();
  }
  // No cached token: log in with $DET_PASS or a blank password.
  std::string login_user = *user;
  std::string password = env_.password.value_or("");
  Result<std::string> token = DoLogin(login_user, password);
  if (!token.ok()) {
    if (token.status().code() == StatusCode::kUnauthenticated) {
      return Unauthenticated("not logged in: the master refused the " +
                             std::string(env_.password ? "password in DET_PASS" : "blank password") +
                             " for user '" + login_user + "'; run `det user login " + login_user +
                             "` to log in");
    }
    return token.status();
  }
  token_ = *token;
  username_ = login_user;
  token_from_cache_ = false;
  // As Determined's login_with_cache: the token is cached for later `-u USER` calls, but the
  // active user changes only on `det user login`.
  cache_.SetToken(master_url_, login_user, *token_);
  Status saved = cache_.Save();
  (void)saved;  // A read-only config dir only costs a login per command.
  return Status::Ok();
}

Status Session::DropCachedToken() {
  if (username_) cache_.DropUser(master_url_, *username_);
  token_.reset();
  token_from_cache_ = false;
  return cache_.Save();
}

Result<std::string> Session::GetBytes(const std::string& path, const std::string& accept,
                                      long timeout_seconds) {
  DET_RETURN_IF_ERROR(EnsureToken());
  http_.SetHeader("Accept", accept);
  Result<HttpResponse> resp = Send("GET", path, "", timeout_seconds, true);
  if (resp.ok() && resp->status == 401 && token_from_cache_ && !retried_) {
    retried_ = true;
    (void)DropCachedToken();
    Status st = EnsureToken();
    if (st.ok()) resp = Send("GET", path, "", timeout_seconds, true);
  }
  http_.SetHeader("Accept", "application/json");
  if (!resp.ok()) return resp.status();
  DET_RETURN_IF_ERROR(StatusFromHttp(*resp));
  return std::move(resp->body);
}

Result<nlohmann::json> Session::Call(const std::string& method, const std::string& path,
                                     const std::optional<nlohmann::json>& body,
                                     long timeout_seconds) {
  DET_RETURN_IF_ERROR(EnsureToken());
  std::string text = body ? body->dump() : "";
  DET_ASSIGN_OR_RETURN(HttpResponse resp, Send(method, path, text, timeout_seconds, true));
  if (resp.status == 401 && token_from_cache_ && !retried_) {
    retried_ = true;
    (void)DropCachedToken();
    DET_RETURN_IF_ERROR(EnsureToken());
    DET_ASSIGN_OR_RETURN(resp, Send(method, path, text, timeout_seconds, true));
  }
  DET_RETURN_IF_ERROR(StatusFromHttp(resp));
  return ParseJsonBody(resp.body);
}

Status Session::StreamResults(const std::string& path,
                              const std::function<bool(const nlohmann::json&)>& on_result) {
  DET_RETURN_IF_ERROR(EnsureToken());
  for (int attempt = 0; attempt < 2; ++attempt) {
    http_.SetHeader("Authorization", "Bearer " + *token_);
    std::string error_message;
    std::string raw_body;
    bool stopped_by_error = false;
    Result<long> status = http_.StreamLines(path, [&](const std::string& line) {
      if (line.empty() || line == "\r") return true;
      nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) {
        raw_body += line + "\n";
        return true;
      }
      auto result = j.find("result");
      if (result != j.end()) return on_result(*result);
      if (j.contains("error")) {
        error_message = ErrorMessageFromJson(j);
        stopped_by_error = true;
        return false;
      }
      return on_result(j);
    });
    if (!status.ok()) {
      return Unavailable("could not reach the master at " + master_url_ + " (" +
                         status.status().message() + ")");
    }
    if (*status == 401 && token_from_cache_ && !retried_) {
      retried_ = true;
      (void)DropCachedToken();
      DET_RETURN_IF_ERROR(EnsureToken());
      continue;
    }
    if (*status >= 300 || *status == 0) {
      HttpResponse resp{*status, raw_body};
      if (!error_message.empty()) return Status(CodeFromHttp(*status), error_message);
      return StatusFromHttp(resp);
    }
    if (stopped_by_error) return Internal(error_message);
    return Status::Ok();
  }
  return Unauthenticated("invalid credentials");
}

Result<nlohmann::json> Session::Login(const std::string& user, const std::string& password) {
  nlohmann::json body = {
      {"username", user}, {"password", HashPasswordForLogin(password)}, {"isHashed", true}};
  DET_ASSIGN_OR_RETURN(HttpResponse resp,
                       Send("POST", "/api/v1/auth/login", body.dump(), 30, /*auth=*/false));
  DET_RETURN_IF_ERROR(StatusFromHttp(resp));
  DET_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonBody(resp.body));
  if (!j.contains("token") || !j["token"].is_string()) {
    return Internal("the login answer has no token");
  }
  token_ = j["token"].get<std::string>();
  username_ = user;
  token_from_cache_ = false;
  cache_.SetToken(master_url_, user, *token_);
  cache_.SetActiveUser(master_url_, user);
  DET_RETURN_IF_ERROR(cache_.Save());
  return j.contains("user") ? j["user"] : nlohmann::json::object();
}

Result<std::string> Session::Logout() {
  std::optional<std::string> user = requested_user_;
  if (!user) user = cache_.ActiveUser(master_url_);
  if (!user) return FailedPrecondition("not logged in");
  std::optional<std::string> cached = cache_.Token(master_url_, *user);
  if (cached) {
    token_ = cached;
    // Revoke on the master; a token it no longer knows is logged out already.
    Result<HttpResponse> resp = Send("POST", "/api/v1/auth/logout", "{}", 30, true);
    if (resp.ok() && resp->status != 401) DET_RETURN_IF_ERROR(StatusFromHttp(*resp));
  }
  cache_.DropUser(master_url_, *user);
  DET_RETURN_IF_ERROR(cache_.Save());
  token_.reset();
  return *user;
}

Status Session::LogoutAll() {
  const std::optional<std::string> requested = requested_user_;
  for (const std::string& user : cache_.Users(master_url_)) {
    requested_user_ = user;
    Result<std::string> out = Logout();
    if (!out.ok()) {
      requested_user_ = requested;
      return out.status();
    }
  }
  requested_user_ = requested;
  return Status::Ok();
}

Result<std::string> Session::Username() {
  DET_RETURN_IF_ERROR(EnsureToken());
  if (username_) return *username_;
  return WhoAmI();
}

Result<std::string> Session::WhoAmI() {
  DET_ASSIGN_OR_RETURN(nlohmann::json me, Get("/api/v1/me"));
  if (me.contains("user") && me["user"].is_object() && me["user"].contains("username")) {
    username_ = me["user"]["username"].get<std::string>();
    return *username_;
  }
  if (username_) return *username_;
  return Internal("the master did not say who the user is");
}

}  // namespace det::cli
