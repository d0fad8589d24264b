#include "common/websocket.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/base64.h"
#include "common/fd_write.h"

namespace det::websocket {

namespace {

bool IsControl(Opcode op) { return static_cast<uint8_t>(op) >= 0x8; }

bool KnownOpcode(uint8_t op) {
  return op == 0x0 || op == 0x1 || op == 0x2 || op == 0x8 || op == 0x9 || op == 0xA;
}

std::array<uint8_t, 4> RandomMask() {
  std::array<uint8_t, 4> mask{};
  if (RAND_bytes(mask.data(), static_cast<int>(mask.size())) != 1) {
    // The mask only keeps caching proxies from being confused; a fixed one still frames right.
    mask = {0x5a, 0xa5, 0x3c, 0xc3};
  }
  return mask;
}

bool IsSocket(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

std::string EncodeFrame(Opcode opcode, std::string_view payload,
                        const std::optional<std::array<uint8_t, 4>>& mask) {
  std::string out;
  out.reserve(payload.size() + 14);
  out.push_back(static_cast<char>(0x80 | static_cast<uint8_t>(opcode)));
  uint8_t mask_bit = mask ? 0x80 : 0x00;
  uint64_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(mask_bit | n));
  } else if (n <= 0xFFFF) {
    out.push_back(static_cast<char>(mask_bit | 126));
    out.push_back(static_cast<char>((n >> 8) & 0xFF));
    out.push_back(static_cast<char>(n & 0xFF));
  } else {
    out.push_back(static_cast<char>(mask_bit | 127));
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((n >> shift) & 0xFF));
    }
  }
  if (!mask) return out.append(payload);
  for (uint8_t b : *mask) out.push_back(static_cast<char>(b));
  size_t start = out.size();
  out.append(payload);
  for (size_t i = 0; i < payload.size(); ++i) out[start + i] ^= static_cast<char>((*mask)[i % 4]);
  return out;
}

Result<std::optional<Frame>> FrameDecoder::Next() {
  if (buf_.size() < 2) return std::optional<Frame>();
  auto byte = [this](size_t i) { return static_cast<uint8_t>(buf_[i]); };
  uint8_t b0 = byte(0), b1 = byte(1);
  if (b0 & 0x70) return InvalidArgument("websocket frame: reserved bits set (no extension agreed)");
  uint8_t op = b0 & 0x0F;
  if (!KnownOpcode(op)) {
    return InvalidArgument("websocket frame: unknown opcode " + std::to_string(op));
  }
  bool masked = (b1 & 0x80) != 0;
  if (masked != expect_masked_) {
    return InvalidArgument(expect_masked_ ? "websocket frame: a client's frames must be masked"
                                          : "websocket frame: a server's frames must not be "
                                            "masked");
  }
  uint64_t len = b1 & 0x7F;
  size_t header = 2;
  if (len == 126) {
    if (buf_.size() < 4) return std::optional<Frame>();
    len = (static_cast<uint64_t>(byte(2)) << 8) | byte(3);
    header = 4;
  } else if (len == 127) {
    if (buf_.size() < 10) return std::optional<Frame>();
    len = 0;
    for (size_t i = 2; i < 10; ++i) len = (len << 8) | byte(i);
    header = 10;
  }
  Frame f;
  f.fin = (b0 & 0x80) != 0;
  f.opcode = static_cast<Opcode>(op);
  if (IsControl(f.opcode) && (!f.fin || len > 125)) {
    return InvalidArgument("websocket frame: a control frame must be whole and at most 125 bytes");
  }
  if (len > max_payload_) {
    return InvalidArgument("websocket frame: payload of " + std::to_string(len) +
                           " bytes is over the limit of " + std::to_string(max_payload_));
  }
  size_t mask_at = header;
  if (masked) header += 4;
  if (buf_.size() < header + len) return std::optional<Frame>();
  f.payload = buf_.substr(header, static_cast<size_t>(len));
  if (masked) {
    for (size_t i = 0; i < f.payload.size(); ++i) {
      f.payload[i] = static_cast<char>(f.payload[i] ^ buf_[mask_at + i % 4]);
    }
  }
  buf_.erase(0, header + static_cast<size_t>(len));
  return std::optional<Frame>(std::move(f));
}

std::string AcceptKey(std::string_view client_key) {
  std::string input(client_key);
  input += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(input.data(), input.size(), digest, &len, EVP_sha1(), nullptr);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

std::string NewClientKey() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof(raw)) != 1) {
    for (size_t i = 0; i < sizeof(raw); ++i) raw[i] = static_cast<unsigned char>(i * 37 + 11);
  }
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(raw), sizeof(raw)));
}

Status Pump(int ws_fd, int in_fd, int out_fd, bool client, std::string_view pending,
            const std::function<void()>& on_traffic) {
  const bool out_socket = IsSocket(out_fd);
  FrameDecoder decoder(/*expect_masked=*/!client);
  decoder.Feed(pending);
  auto last_note = std::chrono::steady_clock::now() - std::chrono::seconds(2);
  auto note = [&] {
    auto now = std::chrono::steady_clock::now();
    if (on_traffic && now - last_note > std::chrono::seconds(1)) {
      last_note = now;
      on_traffic();
    }
  };
  auto send_frame = [&](Opcode op, std::string_view payload) {
    std::optional<std::array<uint8_t, 4>> mask;
    if (client) mask = RandomMask();
    return WriteFully(ws_fd, EncodeFrame(op, payload, mask));
  };
  auto end_output = [&] {
    if (out_socket) shutdown(out_fd, SHUT_WR);
  };
  // Handles the frames decoded so far; false once the connection is done.
  auto drain = [&]() -> Result<bool> {
    while (true) {
      DET_ASSIGN_OR_RETURN(std::optional<Frame> frame, decoder.Next());
      if (!frame) return true;
      switch (frame->opcode) {
        case Opcode::kContinuation:
        case Opcode::kText:
        case Opcode::kBinary:
          if (!WriteFully(out_fd, frame->payload, out_socket)) return false;
          note();
          break;
        case Opcode::kPing:
          if (!send_frame(Opcode::kPong, frame->payload)) return false;
          break;
        case Opcode::kPong:
          break;
        case Opcode::kClose:
          send_frame(Opcode::kClose, frame->payload.substr(0, 2));
          end_output();
          return false;
      }
    }
  };
  DET_ASSIGN_OR_RETURN(bool open, drain());
  if (!open) return Status::Ok();
  std::string buf(64 * 1024, '\0');
  while (true) {
    pollfd fds[2] = {{ws_fd, POLLIN, 0}, {in_fd, POLLIN, 0}};
    int rc = poll(fds, 2, 1000);
    if (rc < 0 && errno != EINTR) return Internal("websocket pump: poll failed");
    if (rc <= 0) continue;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = recv(ws_fd, buf.data(), buf.size(), 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) {
        end_output();
        return Status::Ok();
      }
      decoder.Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
      Result<bool> more = drain();
      if (!more.ok()) {
        send_frame(Opcode::kClose, std::string("\x03\xea", 2));  // 1002: protocol error
        end_output();
        return more.status();
      }
      if (!*more) return Status::Ok();
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(in_fd, buf.data(), buf.size());
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) {
        send_frame(Opcode::kClose, std::string("\x03\xe8", 2));  // 1000: normal closure
        return Status::Ok();
      }
      if (!send_frame(Opcode::kBinary, std::string_view(buf.data(), static_cast<size_t>(n)))) {
        end_output();
        return Status::Ok();
      }
      note();
    }
  }
}

}  // namespace det::websocket
