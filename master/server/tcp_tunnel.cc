#include "master/server/tcp_tunnel.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/fd_write.h"

namespace det::master::server {

Result<int> ConnectTcp(const std::string& host_port) {
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("address " + host_port + ": no port");
  std::string host = host_port.substr(0, colon);
  std::string port = host_port.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return Unavailable("resolve " + host_port + ": " + gai_strerror(rc));
  std::string last = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
      freeaddrinfo(res);
      return fd;
    }
    last = strerror(errno);
    close(fd);
  }
  freeaddrinfo(res);
  return Unavailable("connect to " + host_port + ": " + last);
}

void Splice(int a, int b, const std::function<void()>& on_traffic) {
  bool open_ab = true, open_ba = true;  // a -> b, b -> a
  auto last_note = std::chrono::steady_clock::now() - std::chrono::seconds(2);
  char buf[64 * 1024];
  while (open_ab || open_ba) {
    pollfd fds[2];
    int n = 0;
    int idx_a = -1, idx_b = -1;
    if (open_ab) {
      fds[n] = {a, POLLIN, 0};
      idx_a = n++;
    }
    if (open_ba) {
      fds[n] = {b, POLLIN, 0};
      idx_b = n++;
    }
    int rc = poll(fds, n, 1000);
    if (rc < 0 && errno != EINTR) return;
    if (rc <= 0) continue;
    auto pump = [&](int from, int to, bool* open) {
      ssize_t got = recv(from, buf, sizeof(buf), 0);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
      if (got <= 0) {
        *open = false;
        shutdown(to, SHUT_WR);
        return true;
      }
      if (!WriteFully(to, std::string_view(buf, static_cast<size_t>(got)))) return false;
      auto now = std::chrono::steady_clock::now();
      if (on_traffic && now - last_note > std::chrono::seconds(1)) {
        last_note = now;
        on_traffic();
      }
      return true;
    };
    if (idx_a >= 0 && (fds[idx_a].revents & (POLLIN | POLLHUP | POLLERR))) {
      if (!pump(a, b, &open_ab)) return;
    }
    if (idx_b >= 0 && (fds[idx_b].revents & (POLLIN | POLLHUP | POLLERR))) {
      if (!pump(b, a, &open_ba)) return;
    }
  }
}

}  // namespace det::master::server
