#include "master/searcher/rung_ranking.h"

#include <algorithm>

namespace det::master::searcher {

namespace {

bool Less(const RungRanking::Entry& a, const RungRanking::Entry& b) {
  return a.metric < b.metric || (a.metric == b.metric && a.arrival < b.arrival);
}
// std heaps keep the largest element by the comparator on top.
bool LowCompare(const RungRanking::Entry& a, const RungRanking::Entry& b) { return Less(a, b); }
bool HighCompare(const RungRanking::Entry& a, const RungRanking::Entry& b) { return Less(b, a); }

}  // namespace

RungRanking::RungRanking(double divisor, Ties ties, Split split)
    : divisor_(divisor), ties_(ties), split_(split) {}

size_t RungRanking::SplitFor(size_t n) const {
  // The same double arithmetic as the sorted-list rules this replaces.
  auto k = static_cast<size_t>(static_cast<double>(n) / divisor_);
  if (split_ == Split::kAtLeastOne) k = std::min(n, std::max<size_t>(k, 1));
  return k;
}

bool RungRanking::NewcomerBefore(double metric, const Entry& e) const {
  return ties_ == Ties::kNewcomerLast ? metric < e.metric : metric <= e.metric;
}

bool RungRanking::LandsInLow(double metric) const {
  return !low_.empty() && NewcomerBefore(metric, LastLow());
}

bool RungRanking::LandsAtOrBeforeSplit(double metric) const {
  return LandsInLow(metric) || high_.empty() || NewcomerBefore(metric, FirstHigh());
}

void RungRanking::Insert(double metric, uint32_t trial) {
  Entry e{metric, ties_ == Ties::kNewcomerLast ? next_arrival_++ : next_arrival_--, trial};
  if (LandsInLow(metric)) {
    low_.push_back(e);
    std::push_heap(low_.begin(), low_.end(), LowCompare);
  } else {
    high_.push_back(e);
    std::push_heap(high_.begin(), high_.end(), HighCompare);
  }
  Rebalance();
}

void RungRanking::Rebalance() {
  size_t k = SplitFor(size());
  while (low_.size() > k) {
    std::pop_heap(low_.begin(), low_.end(), LowCompare);
    high_.push_back(low_.back());
    low_.pop_back();
    std::push_heap(high_.begin(), high_.end(), HighCompare);
  }
  while (low_.size() < k) {
    std::pop_heap(high_.begin(), high_.end(), HighCompare);
    low_.push_back(high_.back());
    high_.pop_back();
    std::push_heap(low_.begin(), low_.end(), LowCompare);
  }
}

void RungRanking::Erase(uint32_t trial) {
  auto gone = [trial](const Entry& e) { return e.trial == trial; };
  size_t before = size();
  low_.erase(std::remove_if(low_.begin(), low_.end(), gone), low_.end());
  high_.erase(std::remove_if(high_.begin(), high_.end(), gone), high_.end());
  if (size() == before) return;
  std::make_heap(low_.begin(), low_.end(), LowCompare);
  std::make_heap(high_.begin(), high_.end(), HighCompare);
  Rebalance();
}

std::vector<RungRanking::Entry> RungRanking::Sorted() const {
  std::vector<Entry> all;
  all.reserve(size());
  all.insert(all.end(), low_.begin(), low_.end());
  all.insert(all.end(), high_.begin(), high_.end());
  std::sort(all.begin(), all.end(), Less);
  return all;
}

void RungRanking::Assign(const std::vector<Entry>& entries) {
  low_.clear();
  high_.clear();
  int64_t n = static_cast<int64_t>(entries.size());
  // Arrivals 0..n-1 keep the given order; newcomers continue past either end (rule 1).
  for (int64_t i = 0; i < n; ++i) {
    Entry e = entries[static_cast<size_t>(i)];
    e.arrival = static_cast<int32_t>(i);
    high_.push_back(e);
  }
  next_arrival_ = ties_ == Ties::kNewcomerLast ? static_cast<int32_t>(n) : -1;
  std::make_heap(high_.begin(), high_.end(), HighCompare);
  Rebalance();
}

}  // namespace det::master::searcher
