#include "master/searcher/request_id_index.h"

#include <functional>

namespace det::master::searcher {

uint64_t RequestIdIndex::Hash(std::string_view id) { return std::hash<std::string_view>{}(id); }

size_t RequestIdIndex::Probe(std::string_view id, uint64_t hash) const {
  size_t mask = slots_.size() - 1;
  auto tag = static_cast<uint32_t>(hash >> 32);
  for (size_t i = static_cast<size_t>(hash) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.handle == kNoTrial || (s.tag == tag && this->id(s.handle) == id)) return i;
  }
}

TrialHandle RequestIdIndex::Find(std::string_view id) const {
  if (slots_.empty()) return kNoTrial;
  return slots_[Probe(id, Hash(id))].handle;
}

TrialHandle RequestIdIndex::Add(std::string_view id) {
  // Every layer of a search registers the Create it emits: the id just added comes back at once.
  if (size() > 0 && this->id(static_cast<TrialHandle>(size() - 1)) == id) {
    return static_cast<TrialHandle>(size() - 1);
  }
  if (2 * (size() + 1) > slots_.size()) Grow();
  uint64_t hash = Hash(id);
  Slot& s = slots_[Probe(id, hash)];
  if (s.handle != kNoTrial) return s.handle;
  s.tag = static_cast<uint32_t>(hash >> 32);
  s.handle = static_cast<TrialHandle>(size());
  text_.append(id);
  ends_.push_back(text_.size());
  return s.handle;
}

void RequestIdIndex::Grow() {
  slots_.assign(slots_.empty() ? 16 : 2 * slots_.size(), Slot{});
  size_t mask = slots_.size() - 1;
  for (TrialHandle h = 0; h < size(); ++h) {
    uint64_t hash = Hash(id(h));
    size_t i = static_cast<size_t>(hash) & mask;
    while (slots_[i].handle != kNoTrial) i = (i + 1) & mask;
    slots_[i] = Slot{static_cast<uint32_t>(hash >> 32), h};
  }
}

void RequestIdIndex::Clear() {
  text_.clear();
  ends_.assign(1, 0);
  slots_.clear();
}

}  // namespace det::master::searcher
