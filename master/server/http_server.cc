#include "master/server/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <sstream>

namespace det::master::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// Context uploads are limited to 95 MiB of file content; base64 inflates that by 4/3.
constexpr uint64_t kMaxBodyBytes = 160ull << 20;

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

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && isxdigit(s[i + 1]) && isxdigit(s[i + 2])) {
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

std::string ErrorJson(int grpc_code, const std::string& reason, const std::string& message) {
  std::ostringstream os;
  // Only router-level errors are built here; messages are fixed ASCII.
  os << R"({"error":{"code":)" << grpc_code << R"(,"reason":")" << reason << R"(","error":")"
     << message << R"("}})";
  return os.str();
}

class ChunkWriter : public ResponseStream {
 public:
  explicit ChunkWriter(tcp::socket& socket) : socket_(socket) {}
  bool Write(const std::string& chunk) override {
    if (chunk.empty()) return true;
    beast::error_code ec;
    net::write(socket_, http::make_chunk(net::buffer(chunk)), ec);
    return !ec;
  }

 private:
  tcp::socket& socket_;
};

}  // namespace

std::string HttpRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::Query(const std::string& name, const std::string& fallback) const {
  auto it = query.find(name);
  return it == query.end() ? fallback : it->second;
}

std::map<std::string, std::string> ParseQuery(const std::string& query) {
  std::map<std::string, std::string> out;
  std::stringstream ss(query);
  std::string kv;
  while (std::getline(ss, kv, '&')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      out[PercentDecode(kv)] = "";
    } else {
      out[PercentDecode(kv.substr(0, eq))] = PercentDecode(kv.substr(eq + 1));
    }
  }
  return out;
}

void Router::Add(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, SplitPath(pattern), std::move(handler)});
}

HttpResponse Router::Dispatch(HttpRequest& req) const {
  std::vector<std::string> segs = SplitPath(req.path);
  bool path_matched = false;
  for (const Route& r : routes_) {
    if (r.segments.size() != segs.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (size_t i = 0; i < segs.size() && ok; ++i) {
      const std::string& p = r.segments[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
        params[p.substr(1, p.size() - 2)] = PercentDecode(segs[i]);
      } else if (p != segs[i]) {
        ok = false;
      }
    }
    if (!ok) continue;
    path_matched = true;
    if (r.method != req.method) continue;
    req.params = std::move(params);
    return r.handler(req);
  }
  HttpResponse resp;
  if (path_matched) {
    resp.status = 405;
    resp.body = ErrorJson(12, "Unimplemented", "method not allowed");
  } else {
    resp.status = 404;
    resp.body = ErrorJson(5, "NotFound", "not found");
  }
  return resp;
}

struct HttpServer::Impl {
  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  std::mutex conns_mu;
  std::vector<std::weak_ptr<tcp::socket>> conns;
  std::atomic<int> active{0};
};

HttpServer::HttpServer(std::string bind_address, int port, const Router* router)
    : impl_(std::make_unique<Impl>()),
      bind_address_(std::move(bind_address)),
      port_(port),
      router_(router) {}

HttpServer::~HttpServer() { Stop(); }

namespace {

void ServeConnection(std::shared_ptr<tcp::socket> socket, const Router* router,
                     std::atomic<bool>* stopping) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  std::string remote;
  {
    auto ep = socket->remote_endpoint(ec);
    if (!ec) remote = ep.address().to_string();
  }
  while (!stopping->load()) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    http::read(*socket, buffer, parser, ec);
    if (ec == http::error::end_of_stream || ec) {
      if (ec == http::error::body_limit) {
        http::response<http::string_body> res{http::status::payload_too_large, 11};
        res.set(http::field::content_type, "application/json");
        res.body() = ErrorJson(8, "ResourceExhausted",
                               "request body exceeds the maximum allowed size");
        res.prepare_payload();
        http::write(*socket, res, ec);
      }
      break;
    }
    auto& msg = parser.get();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    std::string target(msg.target());
    size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) req.query = ParseQuery(target.substr(q + 1));
    for (const auto& f : msg) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(tolower(c));
      req.headers[name] = std::string(f.value());
    }
    req.body = std::move(msg.body());
    req.remote_address = remote;
    bool keep_alive = msg.keep_alive();

    HttpResponse resp;
    try {
      resp = router->Dispatch(req);
    } catch (const std::exception& e) {
      // A handler bug must not take the master down; answer 500 and keep serving.
      spdlog::error("handler {} {} threw: {}", req.method, req.path, e.what());
      resp = HttpResponse{};
      resp.status = 500;
      resp.body = ErrorJson(13, "Internal", "internal error");
    }

    if (resp.stream) {
      http::response<http::empty_body> res{static_cast<http::status>(resp.status), 11};
      res.set(http::field::content_type, resp.content_type);
      for (const auto& [k, v] : resp.headers) res.set(k, v);
      res.chunked(true);
      http::response_serializer<http::empty_body> sr{res};
      http::write_header(*socket, sr, ec);
      if (ec) break;
      ChunkWriter writer(*socket);
      resp.stream(writer);
      net::write(*socket, http::make_chunk_last(), ec);
      if (ec) break;
    } else {
      http::response<http::string_body> res{static_cast<http::status>(resp.status), 11};
      res.set(http::field::content_type, resp.content_type);
      for (const auto& [k, v] : resp.headers) res.set(k, v);
      res.keep_alive(keep_alive);
      res.body() = std::move(resp.body);
      res.prepare_payload();
      http::write(*socket, res, ec);
      if (ec) break;
    }
    if (!keep_alive) break;
  }
  socket->shutdown(tcp::socket::shutdown_both, ec);
  socket->close(ec);
}

}  // namespace

Status HttpServer::Start() {
  beast::error_code ec;
  auto address = net::ip::make_address(bind_address_ == "localhost" ? "127.0.0.1" : bind_address_,
                                       ec);
  if (ec) return InvalidArgument("invalid bind address '" + bind_address_ + "': " + ec.message());
  tcp::endpoint endpoint{address, static_cast<unsigned short>(port_)};
  impl_->acceptor = std::make_unique<tcp::acceptor>(impl_->ioc);
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(endpoint, ec);
  if (!ec) impl_->acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen on " + bind_address_ + ":" + std::to_string(port_) + ": " +
                       ec.message());
  }
  port_ = impl_->acceptor->local_endpoint().port();
  impl_->accept_thread = std::thread([this] {
    while (!impl_->stopping.load()) {
      auto socket = std::make_shared<tcp::socket>(impl_->ioc);
      beast::error_code aec;
      impl_->acceptor->accept(*socket, aec);
      if (aec) {
        if (impl_->stopping.load()) break;
        continue;
      }
      socket->set_option(tcp::no_delay(true), aec);
      {
        std::lock_guard<std::mutex> lock(impl_->conns_mu);
        impl_->conns.push_back(socket);
      }
      impl_->active++;
      std::thread([this, socket] {
        ServeConnection(socket, router_, &impl_->stopping);
        impl_->active--;
      }).detach();
    }
  });
  return Status::Ok();
}

void HttpServer::Stop() {
  if (!impl_->acceptor || impl_->stopping.exchange(true)) return;
  beast::error_code ec;
  impl_->acceptor->close(ec);
  // Unblock accept() by connecting to ourselves.
  try {
    tcp::socket s(impl_->ioc);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"),
                            static_cast<unsigned short>(port_)), ec);
  } catch (...) {
  }
  if (impl_->accept_thread.joinable()) impl_->accept_thread.join();
  std::lock_guard<std::mutex> lock(impl_->conns_mu);
  for (auto& w : impl_->conns) {
    if (auto s = w.lock()) s->shutdown(tcp::socket::shutdown_both, ec);
  }
}

}  // namespace det::master::server
