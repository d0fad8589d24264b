// HttpServer over a real loopback port: keep-alive, caps, drain, and deferred long polls.
#include "master/server/http_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "master/server/waiters.h"

namespace det::master::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Polls `cond` until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& cond, milliseconds timeout = milliseconds(10000)) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::yield();
  }
  return cond();
}

int ThreadCount() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Blocking sockets need no running io_context; one shared context keeps descriptors down.
net::io_context& ClientContext() {
  static net::io_context ioc;
  return ioc;
}

// A blocking client on one TCP connection; reads fail after `read_timeout`.
class Conn {
 public:
  explicit Conn(int port, milliseconds read_timeout = milliseconds(10000))
      : socket_(ClientContext()) {
    socket_.connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
    timeval tv{static_cast<time_t>(read_timeout.count() / 1000),
               static_cast<suseconds_t>((read_timeout.count() % 1000) * 1000)};
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }

  void Send(const std::string& method, const std::string& target, const std::string& body = "",
            bool keep_alive = true) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(keep_alive);
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
  }

  // The next response; status 0 when the connection ended or the read timed out.
  http::response<http::string_body> Read() {
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(socket_, buffer_, res, ec);
    if (ec) res.result(static_cast<unsigned>(0));
    return res;
  }

  http::response<http::string_body> Call(const std::string& method, const std::string& target,
                                         const std::string& body = "") {
    Send(method, target, body);
    return Read();
  }

  tcp::socket& socket() { return socket_; }

 private:
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

HttpResponse Text(const std::string& body) {
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = body;
  return r;
}

// Starts a server on a free port for `router` and stops it at the end of the test.
struct Served {
  Served(const Router* router, HttpServerOptions options = {})
      : server("127.0.0.1", 0, router, options) {
    Status st = server.Start();
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  HttpServer server;
};

TEST(ParseQueryAllTest, KeepsRepeatedKeysInOrderAndDecodes) {
  auto all = ParseQueryAll("trialIds=3&group=a%20b&trialIds=1&flag");
  HttpRequest req;
  req.query_all = all;
  req.query = ParseQuery("trialIds=3&group=a%20b&trialIds=1&flag");
  EXPECT_EQ(req.QueryAll("trialIds"), (std::vector<std::string>{"3", "1"}));
  EXPECT_EQ(req.QueryAll("group"), (std::vector<std::string>{"a b"}));
  EXPECT_EQ(req.QueryAll("flag"), (std::vector<std::string>{""}));
  EXPECT_TRUE(req.QueryAll("missing").empty());
  EXPECT_EQ(req.Query("trialIds"), "1");  // the single-value view keeps the last
}

// Bytes over 0x7f and broken escapes (what the router fuzzer sends) pass through as they are.
TEST(ParseQueryAllTest, HighBytesAndBrokenEscapesPassThrough) {
  auto q = ParseQuery("a=%\xff\xfe&b=%4&c=%zz&d=\xc3\xa9%41&e=%");
  EXPECT_EQ(q["a"], "%\xff\xfe");
  EXPECT_EQ(q["b"], "%4");
  EXPECT_EQ(q["c"], "%zz");
  EXPECT_EQ(q["d"], std::string("\xc3\xa9") + "A");
  EXPECT_EQ(q["e"], "%");
}

TEST(ParseQueryAllTest, FallsBackToSingleValueMap) {
  HttpRequest req;
  req.query = {{"states", "STATE_COMPLETED"}};
  EXPECT_EQ(req.QueryAll("states"), (std::vector<std::string>{"STATE_COMPLETED"}));
}

TEST(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Router router;
  std::atomic<int> calls{0};
  router.Add("GET", "/echo/{word}", [&](HttpRequest& req) {
    calls++;
    return Text(req.params["word"] + ":" + req.Query("n"));
  });
  Served s(&router);
  Conn c(s.server.port());
  for (int i = 0; i < 5; ++i) {
    auto res = c.Call("GET", "/echo/hi?n=" + std::to_string(i));
    ASSERT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "hi:" + std::to_string(i));
    EXPECT_TRUE(res.keep_alive());
  }
  EXPECT_EQ(calls.load(), 5);
  EXPECT_EQ(s.server.connections(), 1u);
  // Unknown paths and methods keep their JSON errors.
  EXPECT_EQ(c.Call("GET", "/nope").result_int(), 404);
  EXPECT_EQ(c.Call("POST", "/echo/x").result_int(), 405);
}

TEST(HttpServerTest, InlineRouteRunsOffTheWorkerPoolAndOnWorkerHandsBack) {
  // One io thread and one worker: a normal route's handler runs on the worker, an inline one on
  // the io thread, and what an inline handler returns with OnWorker runs on the worker again.
  Router router;
  std::mutex mu;
  std::thread::id normal, inline_handler, handed_back;
  router.Add("GET", "/normal", [&](HttpRequest&) {
    std::lock_guard<std::mutex> lock(mu);
    normal = std::this_thread::get_id();
    return Text("normal");
  });
  router.AddInline("GET", "/inline/{id}", [&](HttpRequest& req) {
    {
      std::lock_guard<std::mutex> lock(mu);
      inline_handler = std::this_thread::get_id();
    }
    if (req.Query("wait") != "1") return Text("inline:" + req.params["id"]);
    return HttpResponse::OnWorker([&, id = req.params["id"]] {
      std::lock_guard<std::mutex> lock(mu);
      handed_back = std::this_thread::get_id();
      return Text("worker:" + id);
    });
  });
  HttpServerOptions options;
  options.io_threads = 1;
  options.worker_threads = 1;
  Served s(&router, options);
  Conn c(s.server.port());
  EXPECT_EQ(c.Call("GET", "/normal").body(), "normal");
  EXPECT_EQ(c.Call("GET", "/inline/7").body(), "inline:7");
  EXPECT_EQ(c.Call("GET", "/inline/8?wait=1").body(), "worker:8");
  // Routes and errors read as before.
  EXPECT_EQ(c.Call("POST", "/inline/9").result_int(), 405);
  EXPECT_EQ(router.Routes().back(), (std::pair<std::string, std::string>{"GET", "/inline/{id}"}));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_NE(inline_handler, normal);
  EXPECT_EQ(handed_back, normal);
}

TEST(HttpServerTest, PipelinedRequestsAnswerInOrder) {
  Router router;
  router.Add("GET", "/slow", [](HttpRequest&) {
    std::this_thread::sleep_for(milliseconds(50));  // a slow handler, not synchronisation
    return Text("slow");
  });
  router.Add("GET", "/fast", [](HttpRequest&) { return Text("fast"); });
  Served s(&router);
  Conn c(s.server.port());
  c.Send("GET", "/slow");
  c.Send("GET", "/fast");
  EXPECT_EQ(c.Read().body(), "slow");
  EXPECT_EQ(c.Read().body(), "fast");
}

TEST(HttpServerTest, ConnectionsBeyondTheCapGet503) {
  Router router;
  router.Add("GET", "/ok", [](HttpRequest&) { return Text("ok"); });
  HttpServerOptions opts;
  opts.max_connections = 2;
  Served s(&router, opts);
  auto a = std::make_unique<Conn>(s.server.port());
  Conn b(s.server.port());
  ASSERT_EQ(a->Call("GET", "/ok").result_int(), 200);
  ASSERT_EQ(b.Call("GET", "/ok").result_int(), 200);
  ASSERT_EQ(s.server.connections(), 2u);
  Conn third(s.server.port());
  auto res = third.Call("GET", "/ok");
  EXPECT_EQ(res.result_int(), 503);
  EXPECT_NE(res.body().find("open connections"), std::string::npos) << res.body();
  EXPECT_FALSE(res.keep_alive());
  // Once one closes, a new connection is served again.
  a.reset();
  ASSERT_TRUE(WaitFor([&] { return s.server.connections() < 2; }));
  Conn fourth(s.server.port());
  EXPECT_EQ(fourth.Call("GET", "/ok").result_int(), 200);
}

TEST(HttpServerTest, OversizedBodyGets413AndOversizedHeaders431) {
  Router router;
  std::atomic<int> calls{0};
  router.Add("POST", "/in", [&](HttpRequest& req) {
    calls++;
    return Text(std::to_string(req.body.size()));
  });
  HttpServerOptions opts;
  opts.max_body_bytes = 1024;
  opts.max_header_bytes = 2048;
  Served s(&router, opts);
  {
    Conn c(s.server.port());
    auto res = c.Call("POST", "/in", std::string(1024, 'x'));
    ASSERT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "1024");
  }
  {
    Conn c(s.server.port());
    auto res = c.Call("POST", "/in", std::string(1025, 'x'));
    EXPECT_EQ(res.result_int(), 413);
    EXPECT_NE(res.body().find("ResourceExhausted"), std::string::npos) << res.body();
  }
  {
    Conn c(s.server.port());
    http::request<http::string_body> req{http::verb::post, "/in", 11};
    req.set("X-Big", std::string(4096, 'h'));
    req.prepare_payload();
    http::write(c.socket(), req);
    EXPECT_EQ(c.Read().result_int(), 431);
  }
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpServerTest, StopWaitsForARunningHandlerThenRefusesConnections) {
  Router router;
  std::promise<void> started;
  std::promise<void> release;
  auto release_future = release.get_future().share();
  router.Add("GET", "/block", [&](HttpRequest&) {
    started.set_value();
    release_future.wait();
    return Text("finished");
  });
  HttpServer server("127.0.0.1", 0, &router);
  ASSERT_TRUE(server.Start().ok());
  int port = server.port();
  Conn c(port);
  Conn idle(port, milliseconds(5000));
  c.Send("GET", "/block");
  started.get_future().wait();

  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    server.Stop();
    stopped = true;
  });
  // Draining: no new connections, and the idle keep-alive connection is closed.
  ASSERT_TRUE(WaitFor([&] {
    try {
      Conn probe(port);
      return false;
    } catch (const std::exception&) {
      return true;
    }
  }));
  EXPECT_EQ(idle.Read().result_int(), 0);  // closed by the drain, no answer
  EXPECT_FALSE(stopped.load());
  EXPECT_EQ(server.in_flight(), 1u);
  release.set_value();
  auto res = c.Read();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "finished");
  EXPECT_FALSE(res.keep_alive());  // the server is going away
  stopper.join();
  EXPECT_TRUE(stopped.load());
}

TEST(HttpServerTest, StopClosesDeferredRequestsAfterTheDrainDeadline) {
  Router router;
  std::mutex mu;
  std::vector<Responder> held;
  router.Add("GET", "/never", [&](HttpRequest&) {
    return HttpResponse::Deferred([&](Responder r) {
      std::lock_guard<std::mutex> lock(mu);
      held.push_back(std::move(r));
    });
  });
  HttpServerOptions opts;
  opts.drain_timeout = milliseconds(200);
  HttpServer server("127.0.0.1", 0, &router, opts);
  ASSERT_TRUE(server.Start().ok());
  Conn c(server.port());
  c.Send("GET", "/never");
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return held.size() == 1;
  }));
  auto t0 = Clock::now();
  server.Stop();
  EXPECT_LT(Clock::now() - t0, milliseconds(5000));
  EXPECT_EQ(c.Read().result_int(), 0);  // cut, never answered
  held.front()(Text("too late"));       // answering after Stop is harmless
}

TEST(HttpServerTest, DroppedResponderAnswers500) {
  Router router;
  router.Add("GET", "/drop", [](HttpRequest&) { return HttpResponse::Deferred([](Responder) {}); });
  Served s(&router);
  Conn c(s.server.port());
  EXPECT_EQ(c.Call("GET", "/drop").result_int(), 500);
  EXPECT_EQ(c.Call("GET", "/drop").result_int(), 500);  // the connection lives on
}

TEST(HttpServerTest, StreamedResponseIsChunked) {
  Router router;
  router.Add("GET", "/lines", [](HttpRequest&) {
    HttpResponse r;
    r.content_type = "application/x-ndjson";
    r.stream = [](ResponseStream& out) {
      for (int i = 0; i < 3; ++i) out.Write("line" + std::to_string(i) + "\n");
    };
    return r;
  });
  Served s(&router);
  Conn c(s.server.port());
  auto res = c.Call("GET", "/lines");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_TRUE(res.chunked());
  EXPECT_EQ(res.body(), "line0\nline1\nline2\n");
  EXPECT_EQ(c.Call("GET", "/lines").body(), "line0\nline1\nline2\n");  // keep-alive after it
}

// 1,200 idle long polls on a server with 2 io threads and 4 workers hold no thread each, and
// notifying one key answers exactly its own poll.
TEST(HttpServerTest, ThousandsOfIdleLongPollsHoldNoThreadAndWakeOnlyTheirOwn) {
  constexpr int kPolls = 1200;
  Waiters waiters;
  Router router;
  router.Add("GET", "/wait/{key}", [&](HttpRequest& req) {
    std::string key = req.params["key"];
    return HttpResponse::Deferred([&waiters, key](Responder respond) {
      waiters.Add(key, Clock::now() + std::chrono::seconds(120), [key, respond](bool timed_out) {
        respond(Text(key + (timed_out ? ":timeout" : ":woken")));
      });
    });
  });
  HttpServerOptions opts;
  opts.io_threads = 2;
  opts.worker_threads = 4;
  Served s(&router, opts);
  int threads_before_polls = ThreadCount();

  std::vector<std::unique_ptr<Conn>> conns;
  for (int i = 0; i < kPolls; ++i) {
    conns.push_back(std::make_unique<Conn>(s.server.port()));
    conns.back()->Send("GET", "/wait/k" + std::to_string(i));
  }
  ASSERT_TRUE(WaitFor([&] { return waiters.size() == static_cast<size_t>(kPolls); }))
      << waiters.size();
  EXPECT_EQ(s.server.in_flight(), static_cast<size_t>(kPolls));
  EXPECT_EQ(s.server.connections(), static_cast<size_t>(kPolls));
  // No thread per poll: the count is what the server started with.
  EXPECT_EQ(ThreadCount(), threads_before_polls);

  waiters.Notify("k617");
  auto res = conns[617]->Read();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "k617:woken");
  ASSERT_TRUE(WaitFor([&] { return s.server.in_flight() == kPolls - 1u; }));
  EXPECT_EQ(waiters.size(), kPolls - 1u);
  for (int i : {0, 616, 618, kPolls - 1}) {
    EXPECT_EQ(conns[i]->socket().available(), 0u) << "poll " << i << " was answered too";
  }
  // The connection that was answered serves another request.
  conns[617]->Send("GET", "/wait/again");
  ASSERT_TRUE(WaitFor([&] { return waiters.size() == static_cast<size_t>(kPolls); }));
  waiters.Notify("again");
  EXPECT_EQ(conns[617]->Read().body(), "again:woken");

  // Expiring answers every poll as timed out.
  waiters.ExpireAll();
  for (int i : {0, 1, kPolls - 1})
    EXPECT_EQ(conns[i]->Read().body(), "k" + std::to_string(i) + ":timeout");
  ASSERT_TRUE(WaitFor([&] { return s.server.in_flight() == 0; }));
}

TEST(WaitersTest, DeadlineFiresAsTimeoutAndNotifyOnlyItsKey) {
  Waiters waiters;
  std::atomic<int> a_woken{0}, b_timed_out{0};
  waiters.Add("a", Clock::now() + std::chrono::seconds(60), [&](bool t) {
    if (!t) a_woken++;
  });
  waiters.Add("b", Clock::now() + milliseconds(50), [&](bool t) {
    if (t) b_timed_out++;
  });
  ASSERT_TRUE(WaitFor([&] { return b_timed_out.load() == 1; }));
  EXPECT_EQ(a_woken.load(), 0);
  waiters.Notify("b");  // nobody left on b
  waiters.Notify("a");
  ASSERT_TRUE(WaitFor([&] { return a_woken.load() == 1; }));
  EXPECT_EQ(waiters.size(), 0u);
  // A callback that registers again (a re-check that must keep waiting) is not lost.
  std::atomic<int> rounds{0};
  std::function<void(bool)> again = [&](bool) {
    if (++rounds < 3) waiters.Add("c", Clock::now() + std::chrono::seconds(60), again);
  };
  waiters.Add("c", Clock::now() + std::chrono::seconds(60), again);
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(WaitFor([&] { return waiters.size() == 1u; }));
    waiters.Notify("c");
    ASSERT_TRUE(WaitFor([&] { return rounds.load() >= i; }));
  }
  EXPECT_EQ(rounds.load(), 3);
  EXPECT_EQ(waiters.size(), 0u);
}

// A burst of registrations and notifications, each Notify right after its key's Add, while the
// timer thread is held busy: they run as one batch, in the order they were made, so no Notify
// overtakes the Add before it and every waiter is woken, none timed out.
TEST(WaitersTest, ABurstKeepsItsOrderSoEveryWaiterAddedBeforeItsNotifyIsWoken) {
  // Declared before the registry, so that a failing run's late callbacks find them alive.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> holding{false};
  constexpr int kKeys = 2000;
  std::atomic<int> woken{0}, timed_out{0};
  Waiters waiters;
  waiters.Add("hold", Clock::now(), [&](bool) {
    holding = true;
    released.wait();
  });
  ASSERT_TRUE(WaitFor([&] { return holding.load(); }));
  for (int i = 0; i < kKeys; ++i) {
    std::string key = "k" + std::to_string(i);
    waiters.Add(key, Clock::now() + std::chrono::seconds(60),
                [&](bool t) { (t ? timed_out : woken)++; });
    waiters.Notify(key);
  }
  release.set_value();
  ASSERT_TRUE(WaitFor([&] { return woken.load() + timed_out.load() == kKeys; }));
  EXPECT_EQ(woken.load(), kKeys);
  EXPECT_EQ(waiters.size(), 0u);
}

}  // namespace
}  // namespace det::master::server
