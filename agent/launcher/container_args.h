#pragma once
// Pure helpers that turn a start command's `container` field into a `podman run` / `docker run`
// command line (no I/O; the launcher runs what these build).

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/entrypoint.h"
#include "common/status.h"

namespace det::agent {

struct ContainerBindMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
  std::string propagation;  // empty: the runtime's default
};

// The `container` field of a start command (api/agent-protocol.md).
struct ContainerSpec {
  std::string image;
  bool force_pull = false;
  nlohmann::json registry_auth;  // null or {username, password, serveraddress|server, auth, ...}
  std::vector<ContainerBindMount> bind_mounts;
  std::optional<int64_t> shm_size_bytes;
  std::vector<std::string> devices;  // "host:container[:mode]"
  std::vector<std::string> add_capabilities;
  std::vector<std::string> drop_capabilities;
};

// Errors name the field, e.g. "container.image: required".
Result<ContainerSpec> ParseContainerSpec(const nlohmann::json& j);

// Where and how this agent runs one allocation's container.
struct ContainerRun {
  std::string runtime;       // "podman" or "docker" (also the client program)
  std::string oci_runtime;   // podman --runtime (e.g. "runc"); empty: podman's default
  std::string name;          // container name, from ContainerName()
  std::string workdir;       // the allocation's work dir: mounted at the same path, the cwd
  std::string harness_path;  // mounted read-only at the same path when non-empty
  std::string data_dir;      // the agent's data dir: a label that finds leftovers of this agent
  std::string allocation_id;
  std::string authfile;  // podman --authfile when non-empty (docker reads DOCKER_CONFIG)
  std::vector<std::string> env_names;  // passed as `-e NAME` (values from the client's env)
  std::vector<std::string> gpu_uuids;  // CUDA devices of the allocation's slots
};

// "det-" + the allocation id with characters container names refuse replaced by '_'.
std::string ContainerName(const std::string& allocation_id);

// The label every container of an agent carries: `ai.determined.agent-data=<data_dir>`.
std::string ContainerAgentLabel(const std::string& data_dir);

// `runtime run --rm ... image argv...`: host network, the work dir, the harness and the bind
// mounts, `-e NAME` for each env name (secrets never appear in argv), shm size, devices,
// capabilities, GPUs (podman: CDI nvidia.com/gpu=UUID; docker: --gpus device=UUID), pull policy
// (always with force_pull, else missing).
std::vector<std::string> BuildContainerRunArgv(const ContainerRun& run, const ContainerSpec& spec,
                                               const std::vector<std::string>& argv);

// `runtime kill --signal N name`.
std::vector<std::string> BuildContainerKillArgv(const std::string& runtime, const std::string& name,
                                                int signo);

// A Docker-format auth file ({"auths":{server:{"auth":base64(user:pass)}}}) from registry_auth,
// which both podman (--authfile) and docker (DOCKER_CONFIG/config.json) read. The server is
// serveraddress, else server, else the image's registry (the part before the first '/' when it
// holds a '.' or ':' or is localhost), else docker.io.
Result<std::string> RegistryAuthFile(const nlohmann::json& registry_auth, const std::string& image);

// The environment inside the container: the command's variables and what BuildProcessEnv adds
// (DET_*, PYTHONPATH with the harness, PYTHONUNBUFFERED, CUDA_VISIBLE_DEVICES), but nothing of
// the agent's own environment, and PATH only when the command sets it (the image's PATH stays).
std::map<std::string, std::string> ContainerEnvironment(
    const std::map<std::string, std::string>& command_env, AgentEnv agent);

}  // namespace det::agent
