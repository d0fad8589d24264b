#include "master/searcher/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace det::master::searcher {

namespace {

constexpr double kEps = 1e-12;
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kLogSqrt2Pi = 0.9189385332046727;  // log(sqrt(2 pi))

double Phi(double z) { return 0.5 * std::erfc(-z / kSqrt2); }

double LogSumExp(const std::vector<double>& xs) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : xs) m = std::max(m, x);
  if (!std::isfinite(m)) return m;
  double sum = 0;
  for (double x : xs) sum += std::exp(x - m);
  return m + std::log(sum);
}

// Picks an index with probability proportional to `weights` (normalised).
size_t PickComponent(const std::vector<double>& weights, NpRand& rng) {
  double u = rng.UnitInterval();
  double acc = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i];
    if (u < acc) return i;
  }
  return weights.size() - 1;
}

// Observation weights and the prior's, normalised to sum 1.
std::vector<double> MixtureWeights(const std::vector<double>& weights, double prior_weight) {
  std::vector<double> w = weights;
  w.push_back(prior_weight);
  double sum = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x = sum > 0 ? x / sum : 1.0 / static_cast<double>(w.size());
  return w;
}

}  // namespace

double StandardNormal(NpRand& rng) {
  double u1 = rng.UnitInterval();
  double u2 = rng.UnitInterval();
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
}

std::vector<double> TpeObservationWeights(size_t n) {
  constexpr size_t kFlat = 25;
  if (n < kFlat) return std::vector<double>(n, 1.0);
  std::vector<double> w;
  w.reserve(n);
  size_t ramp = n - kFlat;
  double start = 1.0 / static_cast<double>(n);
  for (size_t i = 0; i < ramp; ++i) {
    w.push_back(ramp == 1 ? start
                          : start + (1.0 - start) * static_cast<double>(i) /
                                        static_cast<double>(ramp - 1));
  }
  w.insert(w.end(), kFlat, 1.0);
  return w;
}

NumericParzen::NumericParzen(const std::vector<double>& observations,
                             const std::vector<double>& weights, double low, double high,
                             const ParzenOptions& options)
    : low_(low), high_(high) {
  const double range = high - low;
  const double prior_mu = 0.5 * (low + high);
  mus_ = observations;
  mus_.push_back(prior_mu);
  const size_t n = mus_.size();
  sigmas_.assign(n, range);
  if (n > 1) {
    // Each component's bandwidth is the larger gap to its neighbours in sorted order (the
    // bounds as the outer neighbours); without consider_endpoints the outer components take
    // their inner gap instead.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [this](size_t a, size_t b) { return mus_[a] < mus_[b]; });
    std::vector<double> sorted(n + 2);
    sorted[0] = low;
    for (size_t i = 0; i < n; ++i) sorted[i + 1] = mus_[order[i]];
    sorted[n + 1] = high;
    std::vector<double> sig(n);
    for (size_t i = 0; i < n; ++i) {
      sig[i] = std::max(sorted[i + 1] - sorted[i], sorted[i + 2] - sorted[i + 1]);
    }
    if (!options.consider_endpoints && n >= 2) {
      sig[0] = sorted[2] - sorted[1];
      sig[n - 1] = sorted[n] - sorted[n - 1];
    }
    for (size_t i = 0; i < n; ++i) sigmas_[order[i]] = sig[i];
    sigmas_[n - 1] = range;  // the prior's
  }
  double max_sigma = range;
  double min_sigma =
      options.consider_magic_clip ? range / std::min(100.0, 1.0 + static_cast<double>(n)) : kEps;
  for (double& s : sigmas_) s = std::clamp(s, std::max(min_sigma, kEps), max_sigma);
  weights_ = MixtureWeights(weights, options.prior_weight);
  log_norm_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double mass = Phi((high - mus_[i]) / sigmas_[i]) - Phi((low - mus_[i]) / sigmas_[i]);
    log_norm_[i] = std::log(std::max(mass, kEps));
  }
}

double NumericParzen::Sample(NpRand& rng) const {
  size_t k = PickComponent(weights_, rng);
  // Rejection from the untruncated normal: a sigma is at most the range, so at least about a
  // third of the draws land inside even for a component on a bound.
  for (int tries = 0; tries < 1000; ++tries) {
    double x = mus_[k] + sigmas_[k] * StandardNormal(rng);
    if (x >= low_ && x <= high_) return x;
  }
  return std::clamp(mus_[k], low_, high_);
}

double NumericParzen::LogPdf(double x) const {
  std::vector<double> terms(mus_.size());
  for (size_t i = 0; i < mus_.size(); ++i) {
    double z = (x - mus_[i]) / sigmas_[i];
    terms[i] = std::log(std::max(weights_[i], kEps)) - 0.5 * z * z - kLogSqrt2Pi -
               std::log(sigmas_[i]) - log_norm_[i];
  }
  return LogSumExp(terms);
}

double NumericParzen::LogMass(double a, double b) const {
  a = std::max(a, low_);
  b = std::min(b, high_);
  double total = 0;
  for (size_t i = 0; i < mus_.size(); ++i) {
    double mass = Phi((b - mus_[i]) / sigmas_[i]) - Phi((a - mus_[i]) / sigmas_[i]);
    total += weights_[i] * std::max(mass, 0.0) / std::exp(log_norm_[i]);
  }
  return std::log(std::max(total, kEps));
}

CategoricalParzen::CategoricalParzen(const std::vector<int>& observations,
                                     const std::vector<double>& weights, int choices,
                                     const ParzenOptions& options) {
  // Each observation's component puts its mass on its own choice, smoothed by the prior
  // weight spread over the components (Optuna's rule); the prior's component is uniform. The
  // mixture is one distribution.
  std::vector<double> w = MixtureWeights(weights, options.prior_weight);
  const double c = static_cast<double>(choices);
  const double n = static_cast<double>(observations.size());
  const double smooth = options.prior_weight / (n + 1.0);
  const double norm = smooth * c + 1.0;
  probs_.assign(static_cast<size_t>(choices), w.back() / c);
  for (size_t i = 0; i < observations.size(); ++i) {
    for (int k = 0; k < choices; ++k) {
      double p = (smooth + (k == observations[i] ? 1.0 : 0.0)) / norm;
      probs_[static_cast<size_t>(k)] += w[i] * p;
    }
  }
}

int CategoricalParzen::Sample(NpRand& rng) const {
  return static_cast<int>(PickComponent(probs_, rng));
}

double CategoricalParzen::LogPmf(int choice) const {
  return std::log(std::max(probs_[static_cast<size_t>(choice)], kEps));
}

}  // namespace det::master::searcher
