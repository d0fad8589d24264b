#include "common/websocket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace det::websocket {
namespace {

TEST(WebSocketTest, AcceptKeyIsTheRfcExample) {
  // RFC 6455 section 1.3.
  EXPECT_EQ(AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketTest, ClientKeysAreFreshBase64Of16Bytes) {
  std::string a = NewClientKey(), b = NewClientKey();
  EXPECT_EQ(a.size(), 24u);
  EXPECT_NE(a, b);
}

TEST(WebSocketTest, MaskedFramesRoundTripAtEveryLengthForm) {
  for (size_t n : {0u, 5u, 125u, 126u, 65535u, 65536u, 200000u}) {
    std::string payload(n, '\0');
    for (size_t i = 0; i < n; ++i) payload[i] = static_cast<char>(i * 7);
    std::string wire = EncodeFrame(Opcode::kBinary, payload, std::array<uint8_t, 4>{1, 2, 3, 4});
    FrameDecoder server(/*expect_masked=*/true);
    // Fed a byte at a time for the header, then the rest: whole frames only.
    server.Feed(wire.substr(0, 1));
    auto none = server.Next();
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    server.Feed(wire.substr(1));
    auto frame = server.Next();
    ASSERT_TRUE(frame.ok()) << frame.status().message();
    ASSERT_TRUE(frame->has_value()) << n;
    EXPECT_EQ((*frame)->opcode, Opcode::kBinary);
    EXPECT_EQ((*frame)->payload, payload) << n;
  }
}

TEST(WebSocketTest, TheRfcExampleFramesDecode) {
  // RFC 6455 section 5.7: an unmasked "Hello" and a masked "Hello".
  FrameDecoder client(/*expect_masked=*/false);
  client.Feed(std::string("\x81\x05\x48\x65\x6c\x6c\x6f", 7));
  auto f = client.Next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->opcode, Opcode::kText);
  EXPECT_EQ((*f)->payload, "Hello");
  FrameDecoder server(/*expect_masked=*/true);
  server.Feed(std::string("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11));
  f = server.Next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->payload, "Hello");
  EXPECT_EQ(EncodeFrame(Opcode::kText, "Hello", std::array<uint8_t, 4>{0x37, 0xfa, 0x21, 0x3d}),
            std::string("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11));
}

TEST(WebSocketTest, MalformedFramesAreErrorsNamingTheRule) {
  FrameDecoder server(/*expect_masked=*/true);
  server.Feed(EncodeFrame(Opcode::kBinary, "x"));  // unmasked from a client
  auto f = server.Next();
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("must be masked"), std::string::npos);

  FrameDecoder reserved(/*expect_masked=*/false);
  reserved.Feed(std::string("\xc2\x00", 2));
  EXPECT_FALSE(reserved.Next().ok());

  FrameDecoder opcode(/*expect_masked=*/false);
  opcode.Feed(std::string("\x83\x00", 2));
  ASSERT_FALSE(opcode.Next().ok());

  FrameDecoder big(/*expect_masked=*/false, /*max_payload=*/100);
  big.Feed(EncodeFrame(Opcode::kBinary, std::string(101, 'a')));
  auto b = big.Next();
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("over the limit"), std::string::npos);

  FrameDecoder ping(/*expect_masked=*/false);
  ping.Feed(EncodeFrame(Opcode::kPing, std::string(126, 'p')));
  EXPECT_FALSE(ping.Next().ok());
}

// A server pump between a socketpair "client" and a socketpair "backend": bytes both ways,
// a ping answered, and the client's close ends it.
TEST(WebSocketTest, ServerPumpCopiesBothWaysAndEndsOnClose) {
  int ws[2], backend[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ws), 0);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, backend), 0);
  std::array<uint8_t, 4> mask{9, 8, 7, 6};
  std::string first = EncodeFrame(Opcode::kBinary, "already-read", mask);
  Status result = Internal("not run");
  std::thread pump([&] { result = Pump(ws[1], backend[1], backend[1], false, first); });

  auto read_exact = [](int fd, size_t n) {
    std::string out;
    char c[4096];
    while (out.size() < n) {
      ssize_t got = read(fd, c, std::min(sizeof(c), n - out.size()));
      if (got <= 0) break;
      out.append(c, static_cast<size_t>(got));
    }
    return out;
  };
  EXPECT_EQ(read_exact(backend[0], 12), "already-read");
  std::string to_backend = EncodeFrame(Opcode::kBinary, "ssh-bytes", mask);
  ASSERT_EQ(write(ws[0], to_backend.data(), to_backend.size()),
            static_cast<ssize_t>(to_backend.size()));
  EXPECT_EQ(read_exact(backend[0], 9), "ssh-bytes");

  ASSERT_EQ(write(backend[0], "reply", 5), 5);
  FrameDecoder client(/*expect_masked=*/false);
  client.Feed(read_exact(ws[0], 7));
  auto f = client.Next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->opcode, Opcode::kBinary);
  EXPECT_EQ((*f)->payload, "reply");

  std::string ping = EncodeFrame(Opcode::kPing, "hb", mask);
  ASSERT_EQ(write(ws[0], ping.data(), ping.size()), static_cast<ssize_t>(ping.size()));
  client.Feed(read_exact(ws[0], 4));
  f = client.Next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->opcode, Opcode::kPong);
  EXPECT_EQ((*f)->payload, "hb");

  std::string close_frame = EncodeFrame(Opcode::kClose, std::string("\x03\xe8", 2), mask);
  ASSERT_EQ(write(ws[0], close_frame.data(), close_frame.size()),
            static_cast<ssize_t>(close_frame.size()));
  pump.join();
  EXPECT_TRUE(result.ok()) << result.message();
  client.Feed(read_exact(ws[0], 4));
  f = client.Next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->opcode, Opcode::kClose);
  // The backend saw its writing side end.
  char c;
  EXPECT_EQ(read(backend[0], &c, 1), 0);
  for (int fd : {ws[0], ws[1], backend[0], backend[1]}) close(fd);
}

// A client pump masks what it sends, and the end of its input sends a close frame.
TEST(WebSocketTest, ClientPumpMasksAndClosesAtTheEndOfItsInput) {
  int ws[2], in[2], out[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ws), 0);
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(out), 0);
  Status result = Internal("not run");
  std::thread pump([&] { result = Pump(ws[1], in[0], out[1], true, ""); });
  ASSERT_EQ(write(in[1], "hello", 5), 5);
  close(in[1]);
  pump.join();
  EXPECT_TRUE(result.ok());
  std::string wire;
  char buf[256];
  ssize_t n;
  shutdown(ws[1], SHUT_WR);
  while ((n = read(ws[0], buf, sizeof(buf))) > 0) wire.append(buf, static_cast<size_t>(n));
  FrameDecoder server(/*expect_masked=*/true);
  server.Feed(wire);
  auto f = server.Next();
  ASSERT_TRUE(f.ok() && f->has_value()) << (f.ok() ? "" : f.status().message());
  EXPECT_EQ((*f)->payload, "hello");
  f = server.Next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->opcode, Opcode::kClose);
  for (int fd : {ws[0], ws[1], in[0], out[0], out[1]}) close(fd);
}

}  // namespace
}  // namespace det::websocket
