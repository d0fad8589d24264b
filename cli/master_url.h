#pragma once
// Where `det` finds the master: `-m`, else $DET_MASTER, else $DET_MASTER_ADDR, else
// http://127.0.0.1:8080. A value without a scheme gets "http://"; trailing slashes go.

#include <optional>
#include <string>

namespace det::cli {

inline constexpr char kDefaultMasterUrl[] = "http://127.0.0.1:8080";

// `flag` is the -m value (nullopt/empty when not given); the env values likewise.
std::string ResolveMasterUrl(const std::optional<std::string>& flag,
                             const std::optional<std::string>& det_master,
                             const std::optional<std::string>& det_master_addr);

// Same, reading the environment.
std::string ResolveMasterUrlFromEnv(const std::optional<std::string>& flag);

// Adds "http://" when there is no scheme and drops trailing slashes.
std::string NormalizeMasterUrl(std::string url);

}  // namespace det::cli
