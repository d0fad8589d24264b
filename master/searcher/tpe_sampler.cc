#include "master/searcher/tpe_sampler.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "master/searcher/create_action.h"
#include "master/searcher/hparam_sampling.h"

namespace det::master::searcher {

using nlohmann::json;

CreateAction NewTrialAction(SearchContext& ctx) {
  if (ctx.sampler == nullptr) return NewCreateAction(ctx.hparams, ctx.rng);
  return ctx.sampler->Create(ctx.hparams, ctx.rng, ctx.ids);
}

CreateAction TpeSampler::Create(const config::Hyperparameters& space, NpRand& rng,
                                RequestIdIndex& ids) {
  // Every trial with a metric, ranked by the longest length it validated (deeper first), then
  // by its metric there; modelled once n_startup_trials trials have one.
  std::vector<const Trial*> by_seq;
  for (const Trial& t : trials_) {
    if (t.known && (!t.losses.empty() || (options_.constant_liar && !t.ended))) {
      by_seq.push_back(&t);
    }
  }
  std::sort(by_seq.begin(), by_seq.end(),
            [](const Trial* a, const Trial* b) { return a->seq < b->seq; });
  int64_t with_metric = 0;
  std::vector<TpeObservation> observations;
  observations.reserve(by_seq.size());
  for (const Trial* t : by_seq) {
    if (t->losses.empty()) {
      observations.push_back({&t->hparams, std::nullopt, 0});  // running, not yet reported
      continue;
    }
    ++with_metric;
    const auto& [length, loss] = *t->losses.rbegin();
    observations.push_back({&t->hparams, loss, -static_cast<double>(length)});
  }
  json hparams = with_metric < options_.n_startup_trials
                     ? SampleHyperparameters(space, rng)  // as random sampling draws it
                     : SuggestTpe(space, observations, options_, rng);
  CreateAction create = NewCreateActionWithHparams(hparams, rng);
  TrialHandle h = ids.Add(create.request_id);
  if (h >= trials_.size()) trials_.resize(h + 1);
  Trial& t = trials_[h];
  t.known = true;
  t.seq = next_seq_++;
  t.hparams = std::move(hparams);
  return create;
}

void TpeSampler::Validated(TrialHandle trial, uint64_t length, double metric) {
  if (trial >= trials_.size() || !trials_[trial].known) return;
  trials_[trial].losses[length] = options_.smaller_is_better ? metric : -metric;
}

void TpeSampler::Ended(TrialHandle trial) {
  if (trial < trials_.size()) trials_[trial].ended = true;
}

json TpeSampler::Snapshot(const RequestIdIndex& ids) const {
  json trials = json::object();
  for (TrialHandle h = 0; h < trials_.size(); ++h) {
    const Trial& t = trials_[h];
    if (!t.known) continue;
    json losses = json::object();
    for (const auto& [length, loss] : t.losses) losses[std::to_string(length)] = loss;
    trials[std::string(ids.id(h))] = {
        {"seq", t.seq}, {"hparams", t.hparams}, {"losses", std::move(losses)}, {"ended", t.ended}};
  }
  return json{{"next_seq", next_seq_}, {"trials", std::move(trials)}};
}

Status TpeSampler::Restore(const json& snapshot, const RequestIdIndex& ids) {
  if (!snapshot.is_object() || !snapshot.contains("trials") || !snapshot["trials"].is_object()) {
    return InvalidArgument("invalid searcher snapshot: tpe sampler state without trials");
  }
  std::vector<Trial> trials(ids.size());
  for (const auto& [id, j] : snapshot["trials"].items()) {
    TrialHandle h = ids.Find(id);
    if (h == kNoTrial) {
      return InvalidArgument("invalid searcher snapshot: tpe sampler state of unknown trial " + id);
    }
    Trial& t = trials[h];
    t.known = true;
    t.seq = j.value("seq", int64_t{0});
    t.ended = j.value("ended", false);
    t.hparams = j.value("hparams", json::object());
    const json losses = j.value("losses", json::object());
    for (const auto& [length, loss] : losses.items()) {
      uint64_t l = 0;
      auto [end, err] = std::from_chars(length.data(), length.data() + length.size(), l);
      if (err != std::errc() || end != length.data() + length.size() || !loss.is_number()) {
        return InvalidArgument("invalid searcher snapshot: tpe sampler loss '" + length + "' of " +
                               id);
      }
      t.losses[l] = loss.get<double>();
    }
  }
  trials_ = std::move(trials);
  next_seq_ = snapshot.value("next_seq", int64_t{0});
  return Status::Ok();
}

}  // namespace det::master::searcher
