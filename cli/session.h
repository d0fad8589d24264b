#pragma once
// Session: an authenticated connection from `det` to one master. It resolves credentials
// lazily on the first authenticated call, in this order:
//   1. $DET_USER_TOKEN (with $DET_USER or -u naming the user): used as is;
//   2. a token cached in auth.json for the requested user (-u / $DET_USER) or the master's
//      active user;
//   3. $DET_PASS for the requested user (or `determined`);
//   4. a blank-password login as the requested user, by default `determined`.
// Fresh tokens from 3 and 4 are cached. A cached token the master answers 401 to is dropped
// and credentials are resolved once more. Errors carry the master's message
// (`{"error":{"error": ...}}`). Thread-compatible.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/auth_cache.h"
#include "common/http_client.h"
#include "common/status.h"

namespace det::cli {

// Credentials from the environment ($DET_USER, $DET_USER_TOKEN, $DET_PASS).
struct AuthEnv {
  std::optional<std::string> user;
  std::optional<std::string> token;
  std::optional<std::string> password;
  static AuthEnv FromEnvironment();
};

class Session {
 public:
  // `requested_user` is the -u flag (nullopt when not given).
  Session(std::string master_url, std::optional<std::string> requested_user, AuthEnv env,
          std::string auth_cache_path);

  const std::string& master_url() const { return master_url_; }

  // An unauthenticated request; the body is parsed as JSON.
  Result<nlohmann::json> GetUnauthenticated(const std::string& path);

  // Authenticated requests. `body` is sent as JSON when given.
  Result<nlohmann::json> Get(const std::string& path) { return Call("GET", path, std::nullopt); }
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body,
                              long timeout_seconds = 60) {
    return Call("POST", path, body, timeout_seconds);
  }
  Result<nlohmann::json> Call(const std::string& method, const std::string& path,
                              const std::optional<nlohmann::json>& body,
                              long timeout_seconds = 60);

  // An authenticated GET whose body is returned as raw bytes (e.g. a checkpoint archive),
  // sent with `Accept: <accept>`.
  Result<std::string> GetBytes(const std::string& path, const std::string& accept,
                               long timeout_seconds = 3600);

  // Streams an NDJSON endpoint: `on_result` gets each line's "result" object; returning false
  // stops the stream. A `{"error": ...}` line or a non-2xx answer is an error.
  Status StreamResults(const std::string& path,
                       const std::function<bool(const nlohmann::json&)>& on_result);

  // Logs in with a plain-text password (hashed as the protocol says), caches the token and
  // makes `user` the active user. Returns the user object.
  Result<nlohmann::json> Login(const std::string& user, const std::string& password);
  // Revokes the current user's token on the master and drops it from the cache.
  Result<std::string> Logout();
  // `det user logout --all`: logs out every user with a cached token for this master.
  Status LogoutAll();
  // The username of the session (asks the master when not known).
  Result<std::string> Username();
  // Asks the master who the session's user is (GET /api/v1/me).
  Result<std::string> WhoAmI();

  AuthCache& cache() { return cache_; }

 private:
  Status EnsureToken();
  Status DropCachedToken();
  Result<std::string> DoLogin(const std::string& user, const std::string& password);
  Result<HttpResponse> Send(const std::string& method, const std::string& path,
                            const std::string& body, long timeout_seconds, bool auth);

  std::string master_url_;
  std::optional<std::string> requested_user_;
  AuthEnv env_;
  AuthCache cache_;
  HttpClient http_;         // authenticated calls
  HttpClient http_noauth_;  // calls without a token

  std::optional<std::string> token_;
  std::optional<std::string> username_;
  bool token_from_cache_ = false;
  bool retried_ = false;
};

// Converts an HTTP answer that is not 2xx into a Status carrying the master's message.
Status StatusFromHttp(const HttpResponse& resp);
// Parses a JSON body ({} when empty).
Result<nlohmann::json> ParseJsonBody(const std::string& body);

}  // namespace det::cli
