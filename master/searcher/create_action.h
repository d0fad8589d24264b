#pragma once
// NewCreateAction: builds a Create with Determined's exact RNG consumption (reference §1.2):
// hyperparameter sample, then 16 bytes for a UUIDv4 request id, then the trial seed. Shared by
// every search method so equal seeds give equal trials.

#include <cstdint>
#include <string>

#include "master/config/experiment_config.h"
#include "master/searcher/nprand.h"
#include "master/searcher/searcher.h"

namespace det::master::searcher {

CreateAction NewCreateAction(const config::Hyperparameters& hparams, NpRand& rng);

// Like NewCreateAction with the hyperparameters already chosen (PBT children): draws only the
// 16 request-id bytes and the trial seed.
CreateAction NewCreateActionWithHparams(nlohmann::json hparams, NpRand& rng);

// Lower-case 8-4-4-4-12 text of 16 bytes after setting the version-4 and variant bits.
std::string UuidV4FromBytes(const uint8_t bytes[16]);

}  // namespace det::master::searcher
