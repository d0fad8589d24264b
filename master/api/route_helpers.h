#pragma once
// Shared pieces of the route handlers: authentication wrappers, JSON bodies and fields.

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "master/api/error_mapping.h"
#include "master/server/http_server.h"
#include "master/server/master.h"

namespace det::master::api {

using AuthedHandler =
    std::function<server::HttpResponse(server::HttpRequest&, const server::Principal&)>;

enum class Auth { kUser, kUserOrAllocation };

// Wraps a handler so it runs only with a valid token; otherwise 401 "token missing" /
// "invalid credentials". Exceptions from JSON access become 400s naming the problem.
server::Handler WithAuth(server::Master* master, Auth auth, AuthedHandler handler);
// A user route on the {id} path parameter that runs `action(id)` and answers {} (pause,
// archive, kill, delete, ...).
server::Handler IdAction(server::Master* master, std::function<Status(int64_t)> action);
// Same error handling, no authentication.
server::Handler NoAuth(std::function<server::HttpResponse(server::HttpRequest&)> handler);

server::HttpResponse JsonResponse(const nlohmann::json& body, int status = 200);
// Parses the request body; an empty body is {}. A null field means the field is absent
// (Determined's clients send every unset field as null), so null fields are dropped at every level
// except inside free-form objects (metadata, metrics, hparams, settings), where null is a value.
Result<nlohmann::json> ParseBody(const server::HttpRequest& req);
// The null-dropping of ParseBody, for bodies parsed elsewhere.
void DropNullFields(nlohmann::json& j);
// Reads a field by its camelCase or snake_case name.
const nlohmann::json* Field(const nlohmann::json& obj, const char* camel, const char* snake);
// Path parameter as a positive integer id.
Result<int64_t> PathId(const server::HttpRequest& req, const char* name);
// Query parameter as an integer, with a default; bad numbers are errors naming the parameter.
Result<int64_t> QueryInt(const server::HttpRequest& req, const char* name, int64_t fallback);
bool QueryBool(const server::HttpRequest& req, const char* name, bool fallback);
// Slices `items` by the request's offset/limit into {<key>: [...], pagination: {...}}.
Result<nlohmann::json> Paginate(const server::HttpRequest& req, const nlohmann::json& items,
                                const char* key);

}  // namespace det::master::api
