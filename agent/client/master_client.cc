#include "agent/client/master_client.h"

#include <nlohmann/json.hpp>

#include "common/base64.h"

namespace det::agent {

Status HttpError(const std::string& what, const HttpResponse& response) {
  std::string message =
      what + ": http " + std::to_string(response.status) + ": " + response.body.substr(0, 300);
  switch (response.status) {
    case 400:
      return InvalidArgument(message);
    case 401:
      return Unauthenticated(message);
    case 403:
      return PermissionDenied(message);
    case 404:
      return NotFound(message);
    default:
      return Unavailable(message);
  }
}

MasterClient::MasterClient(std::string base_url, std::string agent_id,
                           const std::map<std::string, std::string>& headers)
    : agent_path_("/agents/" + UrlEncode(agent_id)), http_(std::move(base_url)) {
  for (const auto& [k, v] : headers) http_.SetHeader(k, v);
}

Result<RegisterResponse> MasterClient::Register(const RegisterRequest& request) {
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& s : request.slots) slots.push_back(SlotToJson(s));
  nlohmann::json body = {{"resourcePool", request.resource_pool},
                         {"hostname", request.hostname},
                         {"version", request.version},
                         {"slots", slots},
                         {"running", request.running},
                         {"containerRuntimes", request.container_runtimes}};
  DET_ASSIGN_OR_RETURN(HttpResponse resp,
                       http_.Request("POST", agent_path_ + "/register", body.dump(), 30));
  if (resp.status < 200 || resp.status >= 300) return HttpError("register", resp);
  nlohmann::json j = nlohmann::json::parse(resp.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Internal("register: response is not json");
  RegisterResponse out;
  if (auto it = j.find("masterId"); it != j.end() && it->is_string()) out.master_id = *it;
  if (auto it = j.find("clusterId"); it != j.end() && it->is_string()) out.cluster_id = *it;
  if (auto it = j.find("commandSeq"); it != j.end() && !it->is_null()) {
    DET_ASSIGN_OR_RETURN(out.command_seq, JsonInt64(*it));
  }
  return out;
}

Result<std::vector<Command>> MasterClient::PollCommands(int64_t after, int timeout_seconds) {
  std::string path = agent_path_ + "/commands?after=" + std::to_string(after) +
                     "&timeoutSeconds=" + std::to_string(timeout_seconds);
  DET_ASSIGN_OR_RETURN(HttpResponse resp, http_.Request("GET", path, "", timeout_seconds + 15));
  if (resp.status != 200) return HttpError("poll commands", resp);
  return ParseCommandsBody(resp.body);
}

Result<std::string> FetchContextDirectory(HttpClient& http, const std::string& task_id,
                                          const std::string& allocation_token) {
  http.SetHeader("Grpc-Metadata-x-allocation-token", "Bearer " + allocation_token);
  DET_ASSIGN_OR_RETURN(
      HttpResponse resp,
      http.Request("GET", "/api/v1/tasks/" + UrlEncode(task_id) + "/context_directory", "", 120));
  if (resp.status != 200) return HttpError("fetch context directory", resp);
  nlohmann::json j = nlohmann::json::parse(resp.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Internal("fetch context directory: response is not json");
  }
  auto it = j.find("b64Tgz");
  if (it == j.end()) it = j.find("b64_tgz");
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return Internal("fetch context directory: b64Tgz is not a string");
  const std::string& text = it->get_ref<const std::string&>();
  if (text.empty()) return std::string();
  auto decoded = Base64Decode(text);
  if (!decoded.ok()) return Internal("fetch context directory: " + decoded.status().message());
  return std::move(decoded).value();
}

}  // namespace det::agent
