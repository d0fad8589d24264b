#pragma once
// MasterClient: the agent's synchronous calls to the master (register, command long poll,
// context download). Owns one HttpClient, so one MasterClient per thread.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/client/command.h"
#include "agent/detect/slots.h"
#include "common/http_client.h"
#include "common/status.h"

namespace det::agent {

struct RegisterRequest {
  std::string resource_pool;
  std::string hostname;
  std::string version;
  std::vector<Slot> slots;
  std::vector<std::string> running;
  std::vector<std::string> container_runtimes;  // "podman" / "docker"
};

struct RegisterResponse {
  std::string master_id;
  std::string cluster_id;
  int64_t command_seq = 0;
};

class MasterClient {
 public:
  // `headers` go with every request (the agent's credential).
  MasterClient(std::string base_url, std::string agent_id,
               const std::map<std::string, std::string>& headers = {});

  // POST /agents/{id}/register.
  Result<RegisterResponse> Register(const RegisterRequest& request);
  // GET /agents/{id}/commands?after=SEQ&timeoutSeconds=N. NotFound when the master does not
  // know this agent (it must register again); Unavailable on transport errors and 5xx.
  Result<std::vector<Command>> PollCommands(int64_t after, int timeout_seconds);

 private:
  std::string agent_path_;
  HttpClient http_;
};

// GET /api/v1/tasks/{taskId}/context_directory with the allocation token; returns the decoded
// tar.gz bytes (empty when the task has no context).
Result<std::string> FetchContextDirectory(HttpClient& http, const std::string& task_id,
                                          const std::string& allocation_token);

// Maps a non-2xx HTTP response to a Status (404 NotFound, 400 InvalidArgument, 401
// Unauthenticated, 403 PermissionDenied, else Unavailable).
Status HttpError(const std::string& what, const HttpResponse& response);

}  // namespace det::agent
