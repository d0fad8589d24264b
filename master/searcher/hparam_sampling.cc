#include "master/searcher/hparam_sampling.h"

#include <cmath>
#include <cstdint>

namespace det::master::searcher {

namespace {

using config::Hyperparameter;
using nlohmann::json;

json SampleOne(const Hyperparameter& hp, NpRand& rng) {
  switch (hp.type) {
    case Hyperparameter::Type::kConst:
      return hp.val;
    case Hyperparameter::Type::kInt: {
      auto lo = static_cast<int64_t>(hp.minval);
      auto hi = static_cast<int64_t>(hp.maxval);
      return json(lo + rng.Intn(hi - lo + 1));
    }
    case Hyperparameter::Type::kDouble:
      return json(rng.Uniform(hp.minval, hp.maxval));
    case Hyperparameter::Type::kLog:
      return json(std::pow(hp.base, rng.Uniform(hp.minval, hp.maxval)));
    case Hyperparameter::Type::kCategorical:
      if (hp.vals.empty()) return json(nullptr);
      return hp.vals[static_cast<size_t>(rng.Intn(static_cast<int64_t>(hp.vals.size())))];
    case Hyperparameter::Type::kNested:
      return SampleHyperparameters(hp.nested, rng);
  }
  return json(nullptr);
}

}  // namespace

nlohmann::json SampleHyperparameters(const config::Hyperparameters& hps, NpRand& rng) {
  // std::map iterates in byte-wise key order, which fixes the RNG consumption order.
  json out = json::object();
  for (const auto& [name, hp] : hps) out[name] = SampleOne(hp, rng);
  return out;
}

}  // namespace det::master::searcher
