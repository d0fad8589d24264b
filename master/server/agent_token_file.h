// Delivery of an inline agent secret (security.agent_token) to agents the master launches.
//
// Agents started by the master (Slurm jobs, provisioned agents) read the secret from a file
// (--agent-token-file) so it never shows in a process list. When the secret was given inline in
// master.yaml there is no such file, so the master writes one (mode 0600) under its data dir.
#ifndef DET_MASTER_SERVER_AGENT_TOKEN_FILE_H_
#define DET_MASTER_SERVER_AGENT_TOKEN_FILE_H_

#include <string>

#include "common/status.h"

namespace det::master::server {

struct MasterConfig;

// Name of the file written under the data dir for an inline secret.
inline constexpr char kInlineAgentTokenFileName[] = "agent_token.inline";

// Writes `token` to `<data_dir>/agent_token.inline` with mode 0600 (created that way, never
// world-readable, even briefly) and returns its absolute path.
Result<std::string> WriteAgentTokenFile(const std::string& data_dir, const std::string& token);

// When `config` has an inline agent_token and no agent_token_file, writes the file and sets
// config->agent_token_file to it; otherwise leaves `config` unchanged.
Status MaterializeInlineAgentToken(MasterConfig* config);

}  // namespace det::master::server

#endif  // DET_MASTER_SERVER_AGENT_TOKEN_FILE_H_
