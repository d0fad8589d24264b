#include "agent/testing/fake_master.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/base64.h"

namespace det::agent::testing {
namespace http = boost::beast::http;
namespace asio = boost::asio;

namespace {

std::string QueryParam(const std::string& target, const std::string& key) {
  size_t q = target.find('?');
  if (q == std::string::npos) return "";
  std::string query = target.substr(q + 1);
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    std::string kv = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = kv.find('=');
    if (kv.substr(0, eq) == key) return eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return "";
}

}  // namespace

FakeMaster::FakeMaster() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(listen_fd_, 64);
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

FakeMaster::~FakeMaster() {
  stop_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : conn_fds_) shutdown(fd, SHUT_RDWR);
    threads.swap(conn_threads_);
    cv_.notify_all();
  }
  for (auto& t : threads) t.join();
}

void FakeMaster::AcceptLoop() {
  while (!stop_) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stop_) return;
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) {
      close(fd);
      return;
    }
    conn_fds_.push_back(fd);
    conn_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeMaster::Serve(int fd) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.assign(asio::ip::tcp::v4(), fd, ec);
  if (ec) return;
  boost::beast::flat_buffer buffer;
  while (!stop_) {
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) break;
    Request request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    for (const auto& field : req) {
      request.headers[std::string(field.name_string())] = std::string(field.value());
    }
    request.body = req.body();
    Response response = Handle(request);
    http::response<http::string_body> res{static_cast<http::status>(response.status),
                                          req.version()};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());
    res.body() = response.body;
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !req.keep_alive()) break;
  }
  // The fd is closed by the socket; drop it from the shutdown list first.
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(conn_fds_, fd);
  socket.close(ec);
}

FakeMaster::Response FakeMaster::Handle(const Request& request) {
  std::unique_lock<std::mutex> lock(mu_);
  if (unavailable_) return {503, R"({"error":{"code":14,"reason":"Unavailable","error":"down"}})"};
  std::string path = request.target.substr(0, request.target.find('?'));
  auto body = nlohmann::json::parse(request.body.empty() ? "{}" : request.body, nullptr, false);
  if (path.rfind("/agents/", 0) == 0) {
    if (path.ends_with("/register") && request.method == "POST") {
      registrations_.push_back(body);
      return {200, nlohmann::json{{"masterId", "master-1"},
                                  {"clusterId", "cluster-1"},
                                  {"commandSeq", next_seq_ - 1}}
                       .dump()};
    }
    if (path.ends_with("/commands") && request.method == "GET") {
      int64_t after = std::stoll(QueryParam(request.target, "after"));
      int timeout = std::stoi(QueryParam(request.target, "timeoutSeconds"));
      auto pending = [&] {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& c : commands_) {
          if (c["seq"].get<int64_t>() > after) out.push_back(c);
        }
        return out;
      };
      cv_.wait_for(lock, std::chrono::seconds(timeout),
                   [&] { return stop_ || unavailable_ || !pending().empty(); });
      if (unavailable_) return {503, "{}"};
      return {200, nlohmann::json{{"commands", pending()}}.dump()};
    }
    if (path.ends_with("/events") && request.method == "POST") {
      for (const auto& e : body["events"]) events_.push_back(e);
      cv_.notify_all();
      return {200, "{}"};
    }
  }
  if (path.rfind("/api/v1/tasks/", 0) == 0 && path.ends_with("/context_directory")) {
    std::string task = path.substr(14, path.size() - 14 - 18);
    auto it = contexts_.find(task);
    if (it == contexts_.end())
      return {404, R"({"error":{"code":5,"reason":"NotFound","error":"task not found"}})"};
    auto h = request.headers.find("Grpc-Metadata-x-allocation-token");
    if (h == request.headers.end() || h->second != "Bearer " + it->second.second) {
      return {401, R"({"error":{"code":16,"reason":"Unauthenticated","error":"token missing"}})"};
    }
    return {200, nlohmann::json{{"b64Tgz", Base64Encode(it->second.first)}}.dump()};
  }
  if (path == "/api/v1/task/logs" && request.method == "POST") {
    if (logs_unavailable_) return {503, "{}"};
    for (const auto& l : body["logs"]) logs_.push_back(l);
    auto h = request.headers.find("Grpc-Metadata-x-allocation-token");
    log_tokens_.push_back(h == request.headers.end() ? "" : h->second);
    return {200, "{}"};
  }
  return {404, R"({"error":{"code":5,"reason":"NotFound","error":"no route"}})"};
}

int64_t FakeMaster::QueueCommand(nlohmann::json command) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t seq = next_seq_++;
  command["seq"] = seq;
  commands_.push_back(std::move(command));
  cv_.notify_all();
  return seq;
}

void FakeMaster::SetContext(const std::string& task_id, const std::string& tgz,
                            const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  contexts_[task_id] = {tgz, token};
}

void FakeMaster::SetUnavailable(bool v) {
  std::lock_guard<std::mutex> lock(mu_);
  unavailable_ = v;
  cv_.notify_all();
}

void FakeMaster::SetLogsUnavailable(bool v) {
  std::lock_guard<std::mutex> lock(mu_);
  logs_unavailable_ = v;
}

std::vector<nlohmann::json> FakeMaster::registrations() {
  std::lock_guard<std::mutex> lock(mu_);
  return registrations_;
}

std::vector<nlohmann::json> FakeMaster::events() {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

std::vector<nlohmann::json> FakeMaster::logs() {
  std::lock_guard<std::mutex> lock(mu_);
  return logs_;
}

std::vector<std::string> FakeMaster::log_tokens() {
  std::lock_guard<std::mutex> lock(mu_);
  return log_tokens_;
}

bool FakeMaster::WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

}  // namespace det::agent::testing
