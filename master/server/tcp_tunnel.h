#pragma once
// Byte tunnels for the /proxy/ route: connect to a task's service and copy bytes both ways
// between two sockets until both directions are closed.

#include <functional>
#include <string>

#include "common/status.h"

namespace det::master::server {

// A blocking TCP connection to "host:port"; returns the descriptor.
Result<int> ConnectTcp(const std::string& host_port);

// Copies a -> b and b -> a until both directions end; a half-closed direction is passed on with
// shutdown(SHUT_WR). `on_traffic` runs at most once per second while bytes flow (idle timers).
// Closes neither descriptor.
void Splice(int a, int b, const std::function<void()>& on_traffic);

}  // namespace det::master::server
