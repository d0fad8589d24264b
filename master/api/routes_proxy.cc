// /proxy/{task_id}/...: HTTP and websocket traffic to a task's service (a notebook's Jupyter, a
// TensorBoard), and raw TCP (`Upgrade: det-tcp`, a shell's sshd for `det shell`'s ssh
// ProxyCommand), through the master; only the task's owner or an admin gets through. The
// connection is handed over to a tunnel: the request is re-sent to the service as received
// (Jupyter's base_url is this path) and bytes are copied both ways until either side closes.
#include <unistd.h>

#include "common/status.h"
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

HttpResponse Proxy(server::TaskService* tasks, HttpRequest& req, const Principal& who) {
  const std::string prefix = "/proxy/";
  std::string rest = req.path.size() > prefix.size() ? req.path.substr(prefix.size()) : "";
  std::string task_id = rest.substr(0, rest.find('/'));
  if (task_id.empty()) return ErrorResponse(InvalidArgument("/proxy/{task_id}/: task id missing"));
  Result<server::TaskService::ProxyTarget> target = tasks->Proxy(task_id, who);
  if (!target.ok()) return ErrorResponse(target.status());
  std::string upgrade = Lower(req.Header("upgrade"));
  bool tcp = upgrade == "det-tcp";
  std::string raw;
  if (!tcp) RawRequest(req, !upgrade.empty(), target->notebook_token).swap(raw);
  HttpResponse resp;
  resp.takeover = [tasks, task_id, address = target->address, tcp, raw](
                      int fd, const std::string& read_ahead) {
    Result<int> backend = server::ConnectTcp(address);
    if (!backend.ok()) {
      server::WriteAll(
          fd, RawError(502, "Bad Gateway", "task " + task_id + ": " + backend.status().message()));
      return;
    }
    bool ok = tcp ? server::WriteAll(fd,
                                     "HTTP/1.1 101 Switching Protocols\r\nupgrade: det-tcp\r\n"
                                     "connection: Upgrade\r\n\r\n")
                  : server::WriteAll(*backend, raw);
    if (ok && !read_ahead.empty()) ok = server::WriteAll(*backend, read_ahead);
    if (ok) server::Splice(fd, *backend, [tasks, task_id] { tasks->Touch(task_id); });
    close(*backend);
  };
  return resp;
}

}  // namespace

void RegisterProxyRoutes(server::Router* router, server::Master* master) {
  server::TaskService* tasks = master->tasks();
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
    router->AddPrefix(
        method, "/proxy",
        WithAuth(master, Auth::kUser, [tasks](HttpRequest& req, const Principal& who) {
          return Proxy(tasks, req, who);
        }));
  }
}

}  // namespace det::master::api
