// /proxy/{task_id}/...: HTTP and websocket traffic to a task's service (a notebook's Jupyter, a
// TensorBoard) through the master, and a shell's ssh as Determined carries it: a WebSocket
// whose binary frames hold the bytes of the shell's sshd connection (the ssh ProxyCommand of
// `det shell open`, ours and Determined's alike). Who gets through is the permissions policy's
// (core::AuthorizeTaskProxy): the owner or an admin; a shell's tunnel without a credential, as
// in Determined, since its sshd admits only the shell's own key. HTTP is handed over as
// received (Jupyter's base_url is this path) and bytes are copied both ways until either side
// closes.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/fd_write.h"
#include "common/status.h"
#include "common/websocket.h"
#include "master/api/error_mapping.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/task_service.h"
#include "master/server/tcp_tunnel.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// The request as the service gets it. A plain request asks the service to close the
// connection after answering, so the tunnel ends with the answer.
std::string RawRequest(const HttpRequest& req, bool upgrade, const std::string& notebook_token) {
  std::string out =
      req.method + " " + (req.target.empty() ? req.path : req.target) + " HTTP/1.1\r\n";
  for (const auto& [name, value] : req.headers) {
    if (name == "content-length" || name == "transfer-encoding" || name == "keep-alive" ||
        name == "proxy-connection") {
      continue;
    }
    if (name == "authorization" && !notebook_token.empty()) continue;
    if (name == "connection" && !upgrade) continue;
    out += name + ": " + value + "\r\n";
  }
  if (!notebook_token.empty()) out += "authorization: token " + notebook_token + "\r\n";
  if (!upgrade) out += "connection: close\r\n";
  if (!req.body.empty() || req.headers.count("content-length")) {
    out += "content-length: " + std::to_string(req.body.size()) + "\r\n";
  }
  out += "\r\n";
  return out + req.body;
}

std::string RawError(int status, const std::string& reason, const std::string& message) {
  std::string body = json{{"error", {{"code", 14}, {"reason", reason}, {"error", message}}}}.dump();
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\ncontent-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
         "\r\nconnection: close\r\n\r\n" + body;
}

HttpResponse Proxy(server::TaskService* tasks, HttpRequest& req, const Principal* who) {
  const std::string prefix = "/proxy/";
  std::string rest = req.path.size() > prefix.size() ? req.path.substr(prefix.size()) : "";
  std::string task_id = rest.substr(0, rest.find('/'));
  if (task_id.empty()) return ErrorResponse(InvalidArgument("/proxy/{task_id}/: task id missing"));
  std::string upgrade = Lower(req.Header("upgrade"));
  bool websocket = upgrade == "websocket";
  Result<server::TaskService::ProxyTarget> target = tasks->Proxy(task_id, who, websocket);
  if (!target.ok()) return ErrorResponse(target.status());
  bool shell = target->type == server::TaskType::kShell;
  std::string ws_key = req.Header("sec-websocket-key");
  if (shell && (!websocket || ws_key.empty())) {
    return ErrorResponse(InvalidArgument(
        "task " + task_id +
        " is a shell: its proxy carries ssh in a WebSocket (Upgrade: websocket with a "
        "Sec-WebSocket-Key), as det shell open sends it"));
  }
  std::string raw;
  if (!shell) RawRequest(req, !upgrade.empty(), target->notebook_token).swap(raw);
  HttpResponse resp;
  resp.takeover = [tasks, task_id, address = target->address, shell, raw, ws_key](
                      int fd, const std::string& read_ahead) {
    Result<int> backend = server::ConnectTcp(address);
    if (!backend.ok()) {
      WriteFully(
          fd, RawError(502, "Bad Gateway", "task " + task_id + ": " + backend.status().message()));
      return;
    }
    auto touch = [tasks, task_id] { tasks->Touch(task_id); };
    if (shell) {
      bool ok = WriteFully(fd,
                           "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Accept: " +
                               websocket::AcceptKey(ws_key) + "\r\n\r\n");
      if (ok) {
        Status st = websocket::Pump(fd, *backend, *backend, /*client=*/false, read_ahead, touch);
        if (!st.ok()) spdlog::info("shell {} tunnel: {}", task_id, st.message());
      }
    } else {
      bool ok = WriteFully(*backend, raw);
      if (ok && !read_ahead.empty()) ok = WriteFully(*backend, read_ahead);
      if (ok) server::Splice(fd, *backend, touch);
    }
    close(*backend);
  };
  return resp;
}

}  // namespace

void RegisterProxyRoutes(server::Router* router, server::Master* master) {
  server::TaskService* tasks = master->tasks();
  // GET takes requests without a credential too (a shell's tunnel, see the top); the policy
  // refuses every other one without a credential with 401.
  router->AddPrefix("GET", "/proxy", NoAuth([master, tasks](HttpRequest& req) {
                      Result<std::optional<Principal>> who = OptionalUser(master, req);
                      if (!who.ok()) return ErrorResponse(who.status());
                      return Proxy(tasks, req, who->has_value() ? &**who : nullptr);
                    }));
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE"}) {
    router->AddPrefix(
        method, "/proxy",
        WithAuth(master, Auth::kUser, [tasks](HttpRequest& req, const Principal& who) {
          return Proxy(tasks, req, &who);
        }));
  }
}

}  // namespace det::master::api
