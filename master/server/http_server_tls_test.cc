// HttpServer over HTTPS: certificates made at test time with the openssl CLI, clients through
// det::HttpClient (libcurl) as det and the agent use it.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <cstdlib>
#include <string>

#include "common/http_client.h"
#include "common/test_dir.h"
#include "master/server/http_server.h"

namespace det::master::server {
namespace {

// A self-signed certificate for 127.0.0.1 and localhost: <dir>/<name>.crt and .key.
void MakeCert(const std::filesystem::path& dir, const std::string& name) {
  std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=" + name +
                    " -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
                    (dir / (name + ".key")).string() + " -out " + (dir / (name + ".crt")).string() +
                    " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Whether a TLS 1.2 client offering only `ciphers` (OpenSSL names) completes a handshake with
// the server on `port`; `error` gets the reason when not.
bool Tls12HandshakeWith(int port, const std::string& ciphers, std::string* error) {
  namespace net = boost::asio;
  net::io_context io;
  net::ssl::context ctx(net::ssl::context::tls_client);
  SSL_CTX_set_max_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  if (SSL_CTX_set_cipher_list(ctx.native_handle(), ciphers.c_str()) != 1) {
    *error = "this OpenSSL cannot offer " + ciphers;
    return false;
  }
  ctx.set_verify_mode(net::ssl::verify_none);
  net::ssl::stream<net::ip::tcp::socket> stream(io, ctx);
  boost::system::error_code ec;
  stream.lowest_layer().connect(
      net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)), ec);
  if (!ec) stream.handshake(net::ssl::stream_base::client, ec);
  if (ec) *error = ec.message();
  return !ec;
}

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_https_");
    MakeCert(dir_, "master");
    MakeCert(dir_, "other");
    router_.Add("GET", "/ping", [](HttpRequest&) {
      HttpResponse r;
      r.body = R"({"pong":true})";
      return r;
    });
    router_.Add("POST", "/echo", [](HttpRequest& req) {
      HttpResponse r;
      r.body = req.body;
      return r;
    });
  }

  HttpServerOptions TlsOptions() {
    HttpServerOptions o;
    o.io_threads = 1;
    o.worker_threads = 2;
    o.tls_cert_file = (dir_ / "master.crt").string();
    o.tls_key_file = (dir_ / "master.key").string();
    return o;
  }

  std::filesystem::path dir_;
  Router router_;
};

TEST_F(HttpsServerTest, ServesHttpsToAClientTrustingItsCa) {
  HttpServer server("127.0.0.1", 0, &router_, TlsOptions());
  ASSERT_TRUE(server.Start().ok());
  EXPECT_TRUE(server.tls());
  HttpClient client("https://127.0.0.1:" + std::to_string(server.port()));
  client.SetTls({(dir_ / "master.crt").string(), "", false});
  auto resp = client.Request("GET", "/ping");
  ASSERT_TRUE(resp.ok()) << resp.status().message();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body, R"({"pong":true})");
  // A body larger than one TLS record comes through whole.
  std::string big(200000, 'x');
  auto echo = client.Request("POST", "/echo", big);
  ASSERT_TRUE(echo.ok()) << echo.status().message();
  EXPECT_EQ(echo->body, big);
  // The name the certificate carries may be asked for explicitly (DET_MASTER_CERT_NAME).
  client.SetTls({(dir_ / "master.crt").string(), "localhost", false});
  auto named = client.Request("GET", "/ping");
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->status, 200);
}

TEST_F(HttpsServerTest, AWrongCaIsRefusedWithAClearError) {
  HttpServer server("127.0.0.1", 0, &router_, TlsOptions());
  ASSERT_TRUE(server.Start().ok());
  std::string url = "https://127.0.0.1:" + std::to_string(server.port());
  HttpClient client(url);
  client.SetTls({(dir_ / "other.crt").string(), "", false});
  auto resp = client.Request("GET", "/ping");
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(
      resp.status().message().find("cannot verify the TLS certificate of the master at " + url),
      std::string::npos)
      << resp.status().message();
  EXPECT_NE(resp.status().message().find("DET_MASTER_CERT_FILE"), std::string::npos);
  // A name the certificate does not carry is refused as well.
  client.SetTls({(dir_ / "master.crt").string(), "master.example.com", false});
  auto named = client.Request("GET", "/ping");
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().code(), StatusCode::kFailedPrecondition);
  // noverify accepts anything (Determined's DET_MASTER_CERT_FILE=noverify).
  client.SetTls({"", "", true});
  auto any = client.Request("GET", "/ping");
  ASSERT_TRUE(any.ok()) << any.status().message();
  EXPECT_EQ(any->status, 200);
}

TEST_F(HttpsServerTest, PlainHttpToAnHttpsServerFailsAndTheServerKeepsServing) {
  HttpServer server("127.0.0.1", 0, &router_, TlsOptions());
  ASSERT_TRUE(server.Start().ok());
  HttpClient plain("http://127.0.0.1:" + std::to_string(server.port()));
  auto resp = plain.Request("GET", "/ping", "", 5);
  EXPECT_TRUE(!resp.ok() || resp->status != 200);
  HttpClient client("https://127.0.0.1:" + std::to_string(server.port()));
  client.SetTls({(dir_ / "master.crt").string(), "", false});
  auto ok = client.Request("GET", "/ping");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpsServerTest, Tls12AcceptsOnlyAeadCiphersWithForwardSecrecy) {
  HttpServer server("127.0.0.1", 0, &router_, TlsOptions());
  ASSERT_TRUE(server.Start().ok());
  std::string error;
  // CBC with RSA key exchange: neither AEAD nor forward secret.
  EXPECT_FALSE(Tls12HandshakeWith(server.port(), "AES128-SHA", &error));
  EXPECT_FALSE(Tls12HandshakeWith(server.port(), "ECDHE-RSA-AES128-SHA", &error));  // CBC
  EXPECT_FALSE(Tls12HandshakeWith(server.port(), "AES128-GCM-SHA256", &error));  // no ECDHE
  EXPECT_TRUE(Tls12HandshakeWith(server.port(), "ECDHE-RSA-AES128-GCM-SHA256", &error)) << error;
  EXPECT_TRUE(Tls12HandshakeWith(server.port(), "ECDHE-RSA-CHACHA20-POLY1305", &error)) << error;
  // Refused handshakes leave the server serving.
  HttpClient client("https://127.0.0.1:" + std::to_string(server.port()));
  client.SetTls({(dir_ / "master.crt").string(), "", false});
  auto ok = client.Request("GET", "/ping");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
}

TEST_F(HttpsServerTest, BadCertificateFilesFailStartNamingTheField) {
  HttpServerOptions missing = TlsOptions();
  missing.tls_cert_file = (dir_ / "nope.crt").string();
  HttpServer a("127.0.0.1", 0, &router_, missing);
  Status st = a.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("security.tls.cert"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("nope.crt"), std::string::npos) << st.message();

  HttpServerOptions mismatched = TlsOptions();
  mismatched.tls_key_file = (dir_ / "other.key").string();
  HttpServer b("127.0.0.1", 0, &router_, mismatched);
  st = b.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("security.tls.key"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("mismatch"), std::string::npos) << st.message();

  HttpServerOptions half = TlsOptions();
  half.tls_key_file.clear();
  HttpServer c("127.0.0.1", 0, &router_, half);
  st = c.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("together"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace det::master::server
