#pragma once
// LocalProvider: the `local` provider of pools that grow (provisioner_service.h). Each agent is
// a determined-agent process on this host, started detached (its own session, so it outlives a
// master restart) as
//   determined-agent --master-url URL --agent-id ID --resource-pool POOL --slots S
//                    --data-dir ROOT/ID
// with its output in ROOT/ID.log. ROOT (<master data dir>/provisioner) holds one record per
// agent, ROOT/ID.json {agentId, pool, pid, slots, launchedAtMs}: List() re-finds the agents of
// a previous master from them (a record whose process is gone, or whose pid now belongs to
// another program, is removed). Stop sends SIGTERM to the agent's process group and SIGKILL
// after `grace_ms` (checked at each List()).

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "master/server/provisioner_service.h"

namespace det::master::server {

class LocalProvider : public Provider {
 public:
  struct Options {
    std::string agent_binary;      // determined-agent
    std::string master_url;        // what the agents connect to
    std::string root;              // records, agent data dirs and logs
    std::string agent_token_file;  // the cluster's agent secret (empty: none sent)
    std::string master_cert_file;  // with an https master_url: the PEM to verify it with
    int64_t grace_ms = 10000;      // SIGTERM -> SIGKILL
  };
  LocalProvider(Options options, const Clock* clock);

  Status Launch(const LaunchSpec& spec) override;
  Status Stop(const std::string& agent_id) override;
  Result<std::vector<Instance>> List() override;

  // determined-agent next to the running executable; "" when there is none.
  static std::string AgentBinaryNearExecutable();

 private:
  struct Record {
    Instance instance;
    pid_t pid = 0;
  };
  int64_t NowMs() const { return clock_->NowMicros() / 1000; }
  // Alive (not a zombie) and running the agent with this id.
  bool IsOurAgent(pid_t pid, const std::string& agent_id) const;

  Options options_;
  const Clock* clock_;
  std::map<std::string, int64_t> kill_at_ms_;  // agents sent SIGTERM: when SIGKILL is due
};

}  // namespace det::master::server
