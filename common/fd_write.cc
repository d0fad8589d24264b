#include "common/fd_write.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace det {

bool WriteFully(int fd, std::string_view data, bool is_socket) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = is_socket ? send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL)
                          : write(fd, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 1000);
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace det
