#include "master/searcher/create_action.h"

#include "master/searcher/hparam_sampling.h"

namespace det::master::searcher {

namespace {
constexpr uint32_t kTrialSeedMask = 0x7fffffff;
constexpr size_t kUuidBytes = 16;
}  // namespace

std::string UuidV4FromBytes(const uint8_t bytes[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  uint8_t b[kUuidBytes];
  for (size_t i = 0; i < kUuidBytes; ++i) b[i] = bytes[i];
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < kUuidBytes; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0x0f]);
  }
  return out;
}

CreateAction NewCreateAction(const config::Hyperparameters& hparams, NpRand& rng) {
  return NewCreateActionWithHparams(SampleHyperparameters(hparams, rng), rng);
}

CreateAction NewCreateActionWithHparams(nlohmann::json hparams, NpRand& rng) {
  CreateAction create;
  create.hparams = std::move(hparams);
  uint8_t bytes[kUuidBytes];
  rng.Read(bytes, kUuidBytes);
  create.request_id = UuidV4FromBytes(bytes);
  create.trial_seed = rng.Bits32() & kTrialSeedMask;
  return create;
}

}  // namespace det::master::searcher
