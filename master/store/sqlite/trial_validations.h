#pragma once
// A trial's best and latest validation report, kept on its row (trials.best_validation_id,
// best_validation_value, latest_validation_id; migration 0021) so that reading a trial does not
// read its validation reports. Pure: the store folds reports in as they are written and
// recomputes from the rows when reports were merged or archived.
//
// The same answer as reading every unarchived validation row ordered by (total_batches, id):
// the latest is the last row; the best is the first row whose searcher metric value is strictly
// better than every earlier one's (ties keep the earliest).

#include <cstdint>
#include <optional>
#include <tuple>

#include "master/config/searcher_metric.h"

namespace det::master::store {

struct ValidationPoint {
  int64_t id = 0;               // metrics row id
  int64_t total_batches = 0;    // its steps
  std::optional<double> value;  // the searcher metric in the report, when present
};

struct TrialValidations {
  std::optional<ValidationPoint> best;  // has a value
  std::optional<ValidationPoint> latest;

  // Folds one report in; reports may come in any order.
  void Fold(const ValidationPoint& p, const config::SearcherMetric& metric) {
    auto key = [](const ValidationPoint& v) { return std::tie(v.total_batches, v.id); };
    if (!latest || key(*latest) < key(p)) latest = p;
    if (!p.value) return;
    if (!best || metric.Better(*p.value, *best->value) ||
        (*p.value == *best->value && key(p) < key(*best))) {
      best = p;
    }
  }

  bool operator==(const TrialValidations& o) const {
    auto same = [](const std::optional<ValidationPoint>& a,
                   const std::optional<ValidationPoint>& b) {
      return a.has_value() == b.has_value() &&
             (!a ||
              (a->id == b->id && a->total_batches == b->total_batches && a->value == b->value));
    };
    return same(best, o.best) && same(latest, o.latest);
  }
};

}  // namespace det::master::store
