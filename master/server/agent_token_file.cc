#include "master/server/agent_token_file.h"

#include <filesystem>
#include <system_error>

#include "common/secret_file.h"
#include "master/server/master_config.h"

namespace det::master::server {

Result<std::string> WriteAgentTokenFile(const std::string& data_dir, const std::string& token) {
  if (token.empty()) return InvalidArgument("security.agent_token: the secret is empty");
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Internal("cannot create data dir '" + data_dir + "': " + ec.message());
  std::filesystem::path path =
      std::filesystem::absolute(std::filesystem::path(data_dir) / kInlineAgentTokenFileName, ec)
          .lexically_normal();
  if (ec) return Internal("cannot resolve data dir '" + data_dir + "': " + ec.message());
  DET_RETURN_IF_ERROR(WriteSecretFile(path.string(), token));
  return path.string();
}

Status MaterializeInlineAgentToken(MasterConfig* config) {
  if (config->agent_token.empty() || !config->agent_token_file.empty()) return Status();
  DET_ASSIGN_OR_RETURN(config->agent_token_file,
                       WriteAgentTokenFile(config->data_dir, config->agent_token));
  return Status();
}

}  // namespace det::master::server
