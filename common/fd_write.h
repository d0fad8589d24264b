#ifndef DET_COMMON_FD_WRITE_H_
#define DET_COMMON_FD_WRITE_H_

#include <string_view>

namespace det {

// Writes all of `data` to `fd`, waiting out EAGAIN on non-blocking descriptors: send() without
// SIGPIPE for sockets, write() for pipes and terminals. False once the peer is gone or on error.
bool WriteFully(int fd, std::string_view data, bool is_socket = true);

}  // namespace det

#endif  // DET_COMMON_FD_WRITE_H_
