#include "master/server/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <optional>

namespace det::master::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class Session;

// Shared by the server and every connection; kept alive by late Responders, so a long poll
// answered after Stop finds a valid (stopped) io_context rather than freed memory.
struct HttpServerCore {
  HttpServerOptions options;
  const Router* router = nullptr;
  net::io_context ioc;
  // Keeps the io threads running while every connection is inside a handler (none has an
  // operation pending), e.g. during the drain once the acceptor is closed.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::unique_ptr<net::thread_pool> workers;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::ssl::context> tls;  // set: every connection is HTTPS
  std::vector<std::thread> io_threads;
  std::atomic<bool> draining{false};
  std::atomic<size_t> connections{0};
  size_t open_sockets = 0;  // guarded by mu; Stop waits for it to reach 0

  std::mutex mu;
  std::condition_variable cv;
  size_t in_flight = 0;  // requests read and not yet answered
  std::map<Session*, std::weak_ptr<Session>> sessions;
  // Threads of chunked responses (log follow) and takeovers: running ones by id; a thread that
  // ends moves its own handle to `ended_streams`, joined by the next stream's start or Stop.
  // (A thread never joined keeps its stack mapped: 8 MB a stream, until the master aborts.)
  std::map<uint64_t, std::thread> stream_threads;
  std::vector<std::thread> ended_streams;
  uint64_t next_stream_id = 0;

  // Accepting (the acceptor's strand only): after a failure (out of descriptors) accepting
  // pauses, doubling up to 1 s; failures are logged at most once per interval.
  std::unique_ptr<net::steady_timer> accept_timer;
  std::chrono::milliseconds accept_backoff{0};
  std::chrono::steady_clock::time_point accept_logged{};
  uint64_t accept_unlogged = 0;
  std::atomic<uint64_t> accept_failures{0};

  void BeginRequest() {
    std::lock_guard<std::mutex> lock(mu);
    ++in_flight;
  }
  void EndRequest() {
    std::lock_guard<std::mutex> lock(mu);
    --in_flight;
    cv.notify_all();
  }
  void DoAccept(std::shared_ptr<HttpServerCore> self);
  void OnAcceptFailed(const std::shared_ptr<HttpServerCore>& self, const beast::error_code& ec);

  // Runs `body` on a thread of its own, unless max_streams are running (false).
  bool StartStreamThread(const std::shared_ptr<HttpServerCore>& self, std::function<void()> body) {
    std::vector<std::thread> ended;
    bool started = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      ended.swap(ended_streams);
      if (stream_threads.size() < options.max_streams && !draining.load()) {
        uint64_t id = ++next_stream_id;
        // The thread waits for `mu` (held here) before touching the map, so its handle is in.
        stream_threads.emplace(id, std::thread([self, id, body = std::move(body)]() mutable {
                                 body();
                                 body = nullptr;  // the session and the response go first
                                 self->EndStreamThread(id);
                               }));
        started = true;
      }
    }
    for (auto& t : ended) t.join();
    return started;
  }
  void EndStreamThread(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = stream_threads.find(id);
    if (it == stream_threads.end()) return;  // detached by Stop
    ended_streams.push_back(std::move(it->second));
    stream_threads.erase(it);
    cv.notify_all();
  }
};

namespace {

HttpResponse InternalError() {
  HttpResponse resp;
  resp.status = 500;
  resp.body = ErrorJson(13, "Internal", "internal error");
  return resp;
}

HttpResponse TooManyStreams(const HttpServerCore& core) {
  HttpResponse resp;
  resp.status = 503;
  resp.body = ErrorJson(14, "Unavailable",
                        core.draining.load()
                            ? std::string("the master is shutting down; retry later")
                            : "the master is serving " + std::to_string(core.options.max_streams) +
                                  " streamed responses, its maximum; retry later");
  return resp;
}

// Whether the peer of `fd` may still read what we write: no FIN, reset or error seen. Data it
// sent (a pipelined request) does not count as leaving.
bool PeerConnected(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return errno == EINTR;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

// A streamed connection may sit idle for hours: TCP keep-alive finds a peer that vanished
// without a FIN (its host gone) in about a minute, and the socket then reports an error.
void KeepAliveProbes(int fd) {
  int on = 1, idle = 30, interval = 10, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

// The connection cap the open-file limit allows: a quarter of it (64 to 1,024 descriptors) is
// kept for the store, files, agents' work and the 503 answers beyond the cap.
size_t ConnectionsAllowedByFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  size_t soft = static_cast<size_t>(rl.rlim_cur);
  size_t reserve = std::clamp<size_t>(soft / 4, 64, 1024);
  return soft > 2 * reserve ? soft - reserve : std::max<size_t>(1, soft / 2);
}

}  // namespace

// One connection. Its handlers run on its strand; at most one request is handled at a time.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HttpServerCore> core, bool reject)
      : core_(std::move(core)), stream_(std::move(socket)), reject_(reject) {
    if (core_->tls)
      ssl_ = std::make_unique<net::ssl::stream<beast::tcp_stream&>>(stream_, *core_->tls);
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string();
    if (!reject_) core_->connections++;
    std::lock_guard<std::mutex> lock(core_->mu);
    ++core_->open_sockets;
  }

  ~Session() {
    if (!reject_) core_->connections--;
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->sessions.erase(this);
    if (!closed_) --core_->open_sockets;
    core_->cv.notify_all();
  }

  void Start() {
    if (!reject_) {
      std::lock_guard<std::mutex> lock(core_->mu);
      core_->sessions[this] = weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (self->ssl_) return self->DoHandshake();
      self->DoRead();
    });
  }

  // Drain: a connection waiting for its next request closes; a busy one closes after answering;
  // a chunked stream (log follow, which never "finishes") is cut now.
  void Drain() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->busy_) {
        self->Close();
      } else if (self->streaming_.load()) {
        self->stream_cancelled_ = true;
        self->Shutdown();
      }
    });
  }

  // After the drain deadline. A late answer then fails to write and ends quietly.
  void ForceClose() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->streaming_.load()) {
        self->stream_cancelled_ = true;
        self->Shutdown();
      } else {
        self->Close();
      }
    });
  }

 private:
  // The state behind one Responder: answers once; answers 500 if dropped unanswered.
  struct Pending {
    Pending(std::shared_ptr<Session> s, bool keep_alive, unsigned version)
        : session(std::move(s)), keep_alive(keep_alive), version(version) {}
    ~Pending() {
      if (!answered.exchange(true)) {
        spdlog::error("a deferred response was dropped without an answer");
        session->PostWrite(InternalError(), keep_alive, version);
      }
    }
    void Answer(HttpResponse r) {
      if (answered.exchange(true)) return;
      if (r.deferred || r.stream) r = InternalError();  // one level of deferral, no streams
      session->PostWrite(std::move(r), keep_alive, version);
    }
    std::shared_ptr<Session> session;
    bool keep_alive;
    unsigned version;
    std::atomic<bool> answered{false};
  };

  // Runs `f` on the connection's stream: TLS over TCP, or TCP.
  template <typename F>
  void WithStream(F&& f) {
    if (ssl_) {
      f(*ssl_);
    } else {
      f(stream_);
    }
  }

  void DoHandshake() {
    stream_.expires_after(core_->options.handshake_timeout);
    ssl_->async_handshake(
        net::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
          self->stream_.expires_never();
          if (ec) {
            // A plain-HTTP client or a client that refuses our certificate.
            spdlog::debug("TLS handshake from {} failed: {}", self->remote_, ec.message());
            return self->Close();
          }
          self->DoRead();
        });
  }

  void DoRead() {
    if (closed_) return;
    if (core_->draining.load() && !reject_) return Close();
    parser_.emplace();
    parser_->header_limit(core_->options.max_header_bytes);
    parser_->body_limit(reject_ ? 64 << 10 : core_->options.max_body_bytes);
    if (reject_) {
      stream_.expires_after(std::chrono::seconds(5));
    } else if (core_->options.idle_timeout.count() > 0) {
      stream_.expires_after(core_->options.idle_timeout);
    }
    WithStream([&](auto& s) {
      http::async_read(
          s, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
    });
  }

  void OnRead(beast::error_code ec) {
    stream_.expires_never();
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      bool body = ec == http::error::body_limit;
      HttpResponse resp;
      resp.status = body ? 413 : 431;
      resp.body = ErrorJson(8, "ResourceExhausted",
                            body ? "request body exceeds the maximum allowed size of " +
                                       std::to_string(core_->options.max_body_bytes) + " bytes"
                                 : "request headers exceed the maximum allowed size of " +
                                       std::to_string(core_->options.max_header_bytes) + " bytes");
      busy_ = true;
      core_->BeginRequest();
      return Write(std::move(resp), false, 11);
    }
    if (ec) return Close();
    auto& msg = parser_->get();
    bool keep_alive = msg.keep_alive();
    unsigned version = msg.version();
    busy_ = true;
    core_->BeginRequest();
    if (reject_) {
      HttpResponse resp;
      resp.status = 503;
      resp.body = ErrorJson(14, "Unavailable",
                            "the master has " + std::to_string(core_->options.max_connections) +
                                " open connections, its maximum; retry later");
      return Write(std::move(resp), false, version);
    }
    auto req = std::make_shared<HttpRequest>();
    req->method = std::string(msg.method_string());
    std::string target(msg.target());
    size_t q = target.find('?');
    req->path = target.substr(0, q);
    req->target = target;
    if (q != std::string::npos) {
      req->query = ParseQuery(target.substr(q + 1));
      req->query_all = ParseQueryAll(target.substr(q + 1));
    }
    for (const auto& f : msg) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(tolower(c));
      req->headers[name] = std::string(f.value());
    }
    req->body = std::move(msg.body());
    req->remote_address = remote_;
    RouteMatch route = core_->router->Match(*req);
    // A handler that never waits runs here; any other on a worker, so it holds no io thread.
    if (route.run_inline) return Handle(route, req, keep_alive, version);
    net::post(*core_->workers, [self = shared_from_this(), route, req, keep_alive, version] {
      self->Handle(route, req, keep_alive, version);
    });
  }

  // On a worker thread, or the connection's strand for an inline route.
  void Handle(const RouteMatch& route, const std::shared_ptr<HttpRequest>& req, bool keep_alive,
              unsigned version) {
    HttpResponse resp;
    try {
      resp = Router::Run(route, *req);
    } catch (const std::exception& e) {
      // A handler bug must not take the master down; answer 500 and keep serving.
      spdlog::error("handler {} {} threw: {}", req->method, req->path, e.what());
      resp = InternalError();
    }
    if (resp.on_worker) {
      // An inline handler's case that may wait: the rest runs on a worker.
      return net::post(*core_->workers, [self = shared_from_this(), req, keep_alive, version,
                                         fn = std::move(resp.on_worker)] {
        HttpResponse r;
        try {
          r = fn();
        } catch (const std::exception& e) {
          spdlog::error("handler {} {} threw: {}", req->method, req->path, e.what());
          r = InternalError();
        }
        if (r.on_worker) r = InternalError();  // one hand-off only
        self->Answer(std::move(r), *req, keep_alive, version);
      });
    }
    Answer(std::move(resp), *req, keep_alive, version);
  }

  void Answer(HttpResponse resp, const HttpRequest& req, bool keep_alive, unsigned version) {
    if (resp.deferred) {
      auto start = std::move(resp.deferred);
      auto pending = std::make_shared<Pending>(shared_from_this(), keep_alive, version);
      Responder respond = [pending](HttpResponse r) { pending->Answer(std::move(r)); };
      try {
        start(std::move(respond));
      } catch (const std::exception& e) {
        spdlog::error("deferred handler {} {} threw: {}", req.method, req.path, e.what());
        pending->Answer(InternalError());
      }
      return;
    }
    if (resp.stream) return StartStream(std::move(resp), keep_alive, version);
    if (resp.takeover) {
      // Handed over on the connection's strand, which reads nothing meanwhile.
      return net::post(stream_.get_executor(), [self = shared_from_this(), resp]() mutable {
        self->StartTakeover(std::move(resp.takeover));
      });
    }
    PostWrite(std::move(resp), keep_alive, version);
  }

  void PostWrite(HttpResponse resp, bool keep_alive, unsigned version) {
    net::post(stream_.get_executor(),
              [self = shared_from_this(), resp = std::move(resp), keep_alive, version]() mutable {
                self->Write(std::move(resp), keep_alive, version);
              });
  }

  void Write(HttpResponse resp, bool keep_alive, unsigned version) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(resp.status), version);
    res->set(http::field::content_type, resp.content_type);
    for (const auto& [k, v] : resp.headers) res->set(k, v);
    res->keep_alive(keep_alive && !core_->draining.load());
    res->body() = std::move(resp.body);
    res->prepare_payload();
    WithStream([&](auto& s) {
      http::async_write(s, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
        self->OnWritten(ec, res->keep_alive());
      });
    });
  }

  void OnWritten(beast::error_code ec, bool keep_alive) {
    busy_ = false;
    core_->EndRequest();
    if (ec || !keep_alive || reject_) return Close();
    DoRead();
  }

  template <typename SyncStream>
  class ChunkWriter : public ResponseStream {
   public:
    ChunkWriter(SyncStream& stream, Session& session) : stream_(stream), session_(session) {}
    bool Write(const std::string& chunk) override {
      if (failed_ || session_.stream_cancelled_.load()) return false;
      int fd = session_.stream_.socket().native_handle();
      // An empty chunk would end the stream, and writing nothing never notices a gone client.
      if (chunk.empty()) return !(failed_ = !PeerConnected(fd));
      beast::error_code ec;
      net::write(stream_, http::make_chunk(net::buffer(chunk)), ec);
      failed_ = ec.failed();
      return !failed_;
    }
    bool failed() const { return failed_; }

   private:
    SyncStream& stream_;
    Session& session_;
    bool failed_ = false;
  };

  // A chunked stream writes synchronously from a thread of its own: no async operation is
  // pending on the socket meanwhile (the connection reads its next request only afterwards).
  void StartStream(HttpResponse resp, bool keep_alive, unsigned version) {
    streaming_ = true;
    KeepAliveProbes(stream_.socket().native_handle());
    auto resp_ptr = std::make_shared<HttpResponse>(std::move(resp));
    bool started = core_->StartStreamThread(
        core_, [self = shared_from_this(), resp_ptr, keep_alive, version]() mutable {
          HttpResponse& resp = *resp_ptr;
          http::response<http::empty_body> res{static_cast<http::status>(resp.status), version};
          res.set(http::field::content_type, resp.content_type);
          for (const auto& [k, v] : resp.headers) res.set(k, v);
          res.chunked(true);
          http::response_serializer<http::empty_body> sr{res};
          beast::error_code ec;
          auto write_all = [&](auto& out) {
            http::write_header(out, sr, ec);
            if (ec) return;
            ChunkWriter<std::remove_reference_t<decltype(out)>> writer(out, *self);
            try {
              resp.stream(writer);
            } catch (const std::exception& e) {
              spdlog::error("response stream threw: {}", e.what());
              ec = net::error::broken_pipe;
            }
            if (writer.failed()) ec = net::error::broken_pipe;  // no last chunk to a gone client
            if (!ec) net::write(out, http::make_chunk_last(), ec);
          };
          if (self->ssl_) {
            write_all(*self->ssl_);
          } else {
            write_all(self->stream_.socket());
          }
          if (!ec && self->stream_cancelled_.load()) ec = net::error::operation_aborted;
          net::post(self->stream_.get_executor(), [self, ec, keep_alive] {
            self->streaming_ = false;
            self->OnWritten(ec, keep_alive && !self->core_->draining.load());
          });
        });
    if (!started) {
      streaming_ = false;
      PostWrite(TooManyStreams(*core_), false, version);
    }
  }

  // Like a stream: the connection belongs to `takeover`'s thread until it returns.
  void StartTakeover(std::function<void(int, const std::string&)> takeover) {
    streaming_ = true;
    std::string read_ahead = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    bool started = core_->StartStreamThread(
        core_, [self = shared_from_this(), takeover = std::move(takeover), read_ahead]() {
          try {
            takeover(self->stream_.socket().native_handle(), read_ahead);
          } catch (const std::exception& e) {
            spdlog::error("connection takeover threw: {}", e.what());
          }
          net::post(self->stream_.get_executor(), [self] {
            self->streaming_ = false;
            self->OnWritten(net::error::eof, false);
          });
        });
    if (!started) {
      streaming_ = false;
      Write(TooManyStreams(*core_), false, 11);
    }
  }

  // shutdown(2) without close: safe while a stream thread writes on the descriptor; every
  // operation on it then fails and the connection ends through the usual paths.
  void Shutdown() {
    if (!closed_) ::shutdown(stream_.socket().native_handle(), SHUT_RDWR);
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
    std::lock_guard<std::mutex> lock(core_->mu);
    --core_->open_sockets;
    core_->cv.notify_all();
  }

  std::shared_ptr<HttpServerCore> core_;
  beast::tcp_stream stream_;
  // TLS over stream_ when the server has a certificate; all I/O then goes through it.
  std::unique_ptr<net::ssl::stream<beast::tcp_stream&>> ssl_;
  bool reject_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string remote_;
  bool busy_ = false;    // a request is being handled (strand only)
  bool closed_ = false;  // strand only
  std::atomic<bool> streaming_{false};
  std::atomic<bool> stream_cancelled_{false};  // the server stops: the stream's Write fails
};

void HttpServerCore::DoAccept(std::shared_ptr<HttpServerCore> self) {
  acceptor->async_accept(net::make_strand(ioc), [self](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (self->draining.load() || ec == net::error::operation_aborted) return;
      return self->OnAcceptFailed(self, ec);
    }
    self->accept_backoff = std::chrono::milliseconds(0);
    socket.set_option(tcp::no_delay(true), ec);
    bool reject = self->connections.load() >= self->options.max_connections;
    std::make_shared<Session>(std::move(socket), self, reject)->Start();
    if (!self->draining.load()) self->DoAccept(self);
  });
}

// Out of descriptors the listening socket stays readable and accept() fails at once: retrying
// at once spins a core and floods the log. Accepting pauses (100 ms, doubling to 1 s) while
// connections close; one log line per interval says how many failed.
void HttpServerCore::OnAcceptFailed(const std::shared_ptr<HttpServerCore>& self,
                                    const beast::error_code& ec) {
  using std::chrono::milliseconds;
  accept_failures++;
  accept_backoff = std::clamp(accept_backoff * 2, milliseconds(100), milliseconds(1000));
  auto now = std::chrono::steady_clock::now();
  if (now - accept_logged >= std::chrono::seconds(10)) {
    spdlog::warn(
        "accept failed: {} ({} more failure(s) since the last message; {} connections open, cap "
        "{}); accepting pauses for {} ms",
        ec.message(), accept_unlogged, connections.load(), options.max_connections,
        accept_backoff.count());
    accept_logged = now;
    accept_unlogged = 0;
  } else {
    ++accept_unlogged;
  }
  accept_timer->expires_after(accept_backoff);
  accept_timer->async_wait([self](beast::error_code wait_ec) {
    if (wait_ec || self->draining.load() || !self->acceptor->is_open()) return;
    self->DoAccept(self);
  });
}

HttpServer::HttpServer(std::string bind_address, int port, const Router* router,
                       HttpServerOptions options)
    : core_(std::make_shared<HttpServerCore>()),
      bind_address_(std::move(bind_address)),
      port_(port) {
  if (options.io_threads <= 0) {
    options.io_threads = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  }
  if (options.worker_threads <= 0) options.worker_threads = 16 * options.io_threads;
  core_->options = options;
  core_->router = router;
}

HttpServer::~HttpServer() { Stop(); }

size_t HttpServer::connections() const { return core_->connections.load(); }

size_t HttpServer::in_flight() const {
  std::lock_guard<std::mutex> lock(core_->mu);
  return core_->in_flight;
}

int HttpServer::io_threads() const { return core_->options.io_threads; }
int HttpServer::worker_threads() const { return core_->options.worker_threads; }
size_t HttpServer::max_connections() const { return core_->options.max_connections; }
uint64_t HttpServer::accept_failures() const { return core_->accept_failures.load(); }

size_t HttpServer::streams() const {
  std::lock_guard<std::mutex> lock(core_->mu);
  return core_->stream_threads.size();
}

size_t HttpServer::unjoined_stream_threads() const {
  std::lock_guard<std::mutex> lock(core_->mu);
  return core_->stream_threads.size() + core_->ended_streams.size();
}
bool HttpServer::tls() const { return core_->tls != nullptr; }

namespace {

constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// A server context from PEM files; the error names the file and OpenSSL's reason.
Result<std::unique_ptr<net::ssl::context>> LoadTlsContext(const HttpServerOptions& options) {
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return InvalidArgument("security.tls: cert and key must be given together (cert: '" +
                           options.tls_cert_file + "', key: '" + options.tls_key_file + "')");
  }
  auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  beast::error_code ec;
  // TLS 1.2 and later only.
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                       net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use,
                   ec);
  // TLS 1.2 suites limited to AEAD ciphers with forward secrecy (TLS 1.3's are all of that).
  if (SSL_CTX_set_cipher_list(ctx->native_handle(), kTls12Ciphers) != 1) {
    return Internal(std::string("cannot set the TLS 1.2 cipher list ") + kTls12Ciphers);
  }
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  ctx->use_certificate_chain_file(options.tls_cert_file, ec);
  if (ec) {
    return InvalidArgument("security.tls.cert: cannot load certificate chain '" +
                           options.tls_cert_file + "': " + ec.message());
  }
  ctx->use_private_key_file(options.tls_key_file, net::ssl::context::pem, ec);
  if (ec) {
    return InvalidArgument("security.tls.key: cannot use private key '" + options.tls_key_file +
                           "' with certificate '" + options.tls_cert_file + "': " + ec.message());
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return InvalidArgument("security.tls.key: private key '" + options.tls_key_file +
                           "' does not match the certificate '" + options.tls_cert_file + "'");
  }
  return ctx;
}

}  // namespace

Status HttpServer::Start() {
  if (!core_->options.tls_cert_file.empty() || !core_->options.tls_key_file.empty()) {
    DET_ASSIGN_OR_RETURN(core_->tls, LoadTlsContext(core_->options));
  }
  beast::error_code ec;
  auto address =
      net::ip::make_address(bind_address_ == "localhost" ? "127.0.0.1" : bind_address_, ec);
  if (ec) return InvalidArgument("invalid bind address '" + bind_address_ + "': " + ec.message());
  tcp::endpoint endpoint{address, static_cast<unsigned short>(port_)};
  // The acceptor's own strand serialises its completions with Stop's close.
  core_->acceptor = std::make_unique<tcp::acceptor>(net::make_strand(core_->ioc));
  core_->acceptor->open(endpoint.protocol(), ec);
  if (!ec) core_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) core_->acceptor->bind(endpoint, ec);
  if (!ec) core_->acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen on " + bind_address_ + ":" + std::to_string(port_) + ": " +
                       ec.message());
  }
  port_ = core_->acceptor->local_endpoint().port();
  core_->accept_timer = std::make_unique<net::steady_timer>(core_->acceptor->get_executor());
  if (size_t fd_cap = ConnectionsAllowedByFdLimit(); fd_cap < core_->options.max_connections) {
    spdlog::warn(
        "the open-file limit (ulimit -n) allows {} connections; max_connections lowered from {} "
        "(raise the limit to serve more)",
        fd_cap, core_->options.max_connections);
    core_->options.max_connections = fd_cap;
  }
  core_->workers = std::make_unique<net::thread_pool>(core_->options.worker_threads);
  core_->DoAccept(core_);
  core_->work.emplace(core_->ioc.get_executor());
  for (int i = 0; i < core_->options.io_threads; ++i) {
    core_->io_threads.emplace_back([core = core_.get()] { core->ioc.run(); });
  }
  started_ = true;
  return Status::Ok();
}

void HttpServer::Stop() {
  if (!started_ || core_->draining.exchange(true)) return;
  std::shared_ptr<HttpServerCore> core = core_;
  net::post(core->acceptor->get_executor(), [core] {
    beast::error_code ec;
    core->acceptor->close(ec);
    core->accept_timer->cancel();
  });
  std::vector<std::shared_ptr<Session>> sessions;
  {
    std::lock_guard<std::mutex> lock(core->mu);
    for (auto& [raw, weak] : core->sessions) {
      if (auto s = weak.lock()) sessions.push_back(std::move(s));
    }
  }
  for (auto& s : sessions) s->Drain();
  {
    std::unique_lock<std::mutex> lock(core->mu);
    if (!core->cv.wait_for(lock, core->options.drain_timeout,
                           [&] { return core->in_flight == 0; })) {
      spdlog::warn("HTTP drain: {} request(s) still running after {} ms; closing", core->in_flight,
                   core->options.drain_timeout.count());
    }
  }
  auto snapshot = [&] {
    std::vector<std::shared_ptr<Session>> out;
    std::lock_guard<std::mutex> lock(core->mu);
    for (auto& [raw, weak] : core->sessions) {
      if (auto s = weak.lock()) out.push_back(std::move(s));
    }
    return out;
  };
  for (auto& s : sessions) s->ForceClose();
  sessions.clear();
  // Handlers still running finish here; their answers go nowhere.
  core->workers->join();
  // No stream starts after the workers ended; one started meanwhile is cut as well.
  for (auto& s : snapshot()) s->ForceClose();
  std::vector<std::thread> ended;
  {
    // A stream ends at its next Write, which fails now; one that never writes is left running
    // (detached) rather than holding the shutdown forever.
    std::unique_lock<std::mutex> lock(core->mu);
    if (!core->cv.wait_for(lock, std::chrono::seconds(5),
                           [&] { return core->stream_threads.empty(); })) {
      spdlog::error("HTTP stop: {} streamed response(s) did not end; leaving them behind",
                    core->stream_threads.size());
      for (auto& [id, t] : core->stream_threads) t.detach();
      core->stream_threads.clear();
    }
    ended.swap(core->ended_streams);
  }
  for (auto& t : ended) t.join();
  core->work.reset();
  {
    // Every connection closes on its strand once its last operation fails.
    std::unique_lock<std::mutex> lock(core->mu);
    core->cv.wait_for(lock, std::chrono::seconds(2), [&] { return core->open_sockets == 0; });
  }
  core->ioc.stop();
  for (auto& t : core->io_threads) t.join();
  core->io_threads.clear();
  // Handlers queued at the stop would keep their sessions (and this Core) alive: run them.
  core->ioc.restart();
  core->ioc.poll();
}

}  // namespace det::master::server
