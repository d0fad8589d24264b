#pragma once
// Parzen estimators for the TPE searcher (tpe_search.h): a weighted mixture over observed values
// plus a prior, for one hyperparameter, as in Bergstra et al. (2011) with the bandwidth and
// weight rules Optuna's TPESampler uses by default. Pure: the RNG is passed in.
//
// A numeric estimator lives in the search space's own coordinates: a `double` hyperparameter's
// values, a `log` one's exponents, an `int` one's values with the bounds widened by half a step
// (probabilities of an int are masses over [x - 0.5, x + 0.5]). Each component is a normal
// truncated to [low, high]; the prior is centred on the range with the range as its sigma.

#include <cstdint>
#include <vector>

#include "master/searcher/nprand.h"

namespace det::master::searcher {

struct ParzenOptions {
  double prior_weight = 1.0;
  bool consider_magic_clip = true;  // sigma >= range / min(100, 1 + components)
  bool consider_endpoints = false;  // the outer components' sigma may reach the bounds
};

// Optuna's default observation weights, oldest first: 1 each below 25 observations, else a
// ramp from 1/n to 1 over all but the newest 25, which weigh 1.
std::vector<double> TpeObservationWeights(size_t n);

class NumericParzen {
 public:
  // `observations` and `weights` of equal size; REQUIRES: low < high.
  NumericParzen(const std::vector<double>& observations, const std::vector<double>& weights,
                double low, double high, const ParzenOptions& options);

  double Sample(NpRand& rng) const;
  // The log density at x (a continuous hyperparameter).
  double LogPdf(double x) const;
  // The log probability mass of [a, b] (an int hyperparameter's value, a = x - 0.5).
  double LogMass(double a, double b) const;

  const std::vector<double>& mus() const { return mus_; }
  const std::vector<double>& sigmas() const { return sigmas_; }
  const std::vector<double>& weights() const { return weights_; }

 private:
  double low_, high_;
  std::vector<double> mus_, sigmas_, weights_;  // the prior last
  std::vector<double> log_norm_;                // log of each component's mass in [low, high]
};

class CategoricalParzen {
 public:
  // `observations` are indices in [0, choices).
  CategoricalParzen(const std::vector<int>& observations, const std::vector<double>& weights,
                    int choices, const ParzenOptions& options);

  int Sample(NpRand& rng) const;
  double LogPmf(int choice) const;
  const std::vector<double>& probabilities() const { return probs_; }

 private:
  std::vector<double> probs_;
};

// A standard normal draw (Box-Muller from two uniforms of `rng`).
double StandardNormal(NpRand& rng);

}  // namespace det::master::searcher
