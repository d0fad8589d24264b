#pragma once
// A byte stream carried in WebSocket binary frames (RFC 6455), as Determined's shell tunnel
// does it: `det shell open`'s ssh ProxyCommand sends ssh's bytes to the master's
// /proxy/{shell id}/ as binary frames, and the master copies them to the shell's sshd.
//
// Frames: encoding, and a decoder fed with whatever the socket gave (pure). Handshake: the
// Sec-WebSocket-Accept answer. Pump: the two directions between a WebSocket connection and a
// byte stream (the one part doing I/O).

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace det::websocket {

enum class Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

struct Frame {
  bool fin = true;
  Opcode opcode = Opcode::kBinary;
  std::string payload;  // unmasked
};

// One frame. A client masks what it sends (`mask` set), a server never does.
std::string EncodeFrame(Opcode opcode, std::string_view payload,
                        const std::optional<std::array<uint8_t, 4>>& mask = std::nullopt);

// Reads frames out of the bytes fed to it, in order.
class FrameDecoder {
 public:
  // `expect_masked`: a server requires masked frames from its client (RFC 6455 5.1); a client
  // refuses masked ones. `max_payload`: larger frames are an error, not a huge allocation.
  explicit FrameDecoder(bool expect_masked, uint64_t max_payload = 16u << 20)
      : expect_masked_(expect_masked), max_payload_(max_payload) {}

  void Feed(std::string_view bytes) { buf_.append(bytes); }
  // The next whole frame; nullopt when more bytes are needed; an error for a malformed frame
  // (reserved bits, unknown opcode, wrong masking, oversized or fragmented control frame).
  Result<std::optional<Frame>> Next();

 private:
  bool expect_masked_;
  uint64_t max_payload_;
  std::string buf_;
};

// base64(SHA-1(key + the RFC's GUID)): the server's Sec-WebSocket-Accept for a client's
// Sec-WebSocket-Key.
std::string AcceptKey(std::string_view client_key);
// A fresh random Sec-WebSocket-Key (16 random bytes, base64).
std::string NewClientKey();

// Copies bytes between a WebSocket connection `ws_fd` (handshake done) and a byte stream: what
// `in_fd` gives goes out in binary frames (masked when `client`), the payloads of data frames
// that arrive are written to `out_fd`. Pings are answered; a close frame is answered and ends
// it; the end of `in_fd` sends a close frame and ends it (the peer's reply is not awaited).
// `pending` holds bytes of the connection already read past the handshake. `on_traffic` runs at
// most once per second while bytes flow. Closes no descriptor; shuts down `out_fd`'s writing
// when it is a socket and the WebSocket side ended.
Status Pump(int ws_fd, int in_fd, int out_fd, bool client, std::string_view pending,
            const std::function<void()>& on_traffic = nullptr);

}  // namespace det::websocket
