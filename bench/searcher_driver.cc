// searcher_driver: one searcher (master/searcher) driven over JSON lines, so a benchmark in
// another language (bench/tpe_vs_optuna.py) can evaluate the same objective for our searchers and
// for Optuna's in the same run.
//
//   in:  {"config": "<experiment config YAML>"}            once, first
//        {"completed": "<request id>", "metric": <number>}  a trial validated at max_length
//   out: {"create": "<request id>", "hparams": {...}, "suggest_us": <micros of the call>}
//        {"idle": true}      after each input: every trial it wants is announced
//        {"shutdown": true}  the search is over
//        {"error": "..."}    then exit 1
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "master/config/experiment_config.h"
#include "master/searcher/searcher.h"

namespace {

using det::master::searcher::Action;
using det::master::searcher::CreateAction;
using det::master::searcher::Searcher;
using det::master::searcher::ShutdownAction;
using nlohmann::json;

int Fail(const std::string& message) {
  std::cout << json{{"error", message}}.dump() << std::endl;
  return 1;
}

// Announces the actions' creations (telling the searcher each was created) and a shutdown.
bool Emit(Searcher& s, const std::vector<Action>& actions, double micros) {
  bool shutdown = false;
  for (const Action& a : actions) {
    if (const auto* c = std::get_if<CreateAction>(&a)) {
      std::cout
          << json{{"create", c->request_id}, {"hparams", c->hparams}, {"suggest_us", micros}}.dump()
          << "\n";
      s.TrialCreated(c->request_id);
    } else if (std::holds_alternative<ShutdownAction>(a)) {
      shutdown = true;
    }
  }
  if (shutdown) std::cout << json{{"shutdown", true}}.dump() << "\n";
  std::cout << json{{"idle", true}}.dump() << std::endl;
  return shutdown;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  if (!std::getline(std::cin, line)) return Fail("expected a config line");
  json first = json::parse(line, nullptr, false);
  if (!first.is_object() || !first.contains("config") || !first["config"].is_string()) {
    return Fail("first line: {\"config\": \"<yaml>\"} expected");
  }
  auto cfg = det::master::config::ParseExperimentConfig(first["config"].get<std::string>(),
                                                        det::master::config::ConfigDefaults{});
  if (!cfg.ok()) return Fail(cfg.status().message());
  if (!cfg->searcher.max_length) return Fail("searcher.max_length: required here");
  const uint64_t length = cfg->searcher.max_length->value;
  auto made = Searcher::Create(*cfg);
  if (!made.ok()) return Fail(made.status().message());
  Searcher& s = **made;
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  std::vector<Action> actions = s.InitialOperations();
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  if (Emit(s, actions, us)) return 0;
  while (std::getline(std::cin, line)) {
    json in = json::parse(line, nullptr, false);
    if (!in.is_object() || !in.contains("completed") || !in.contains("metric")) {
      return Fail("expected {\"completed\": id, \"metric\": number}");
    }
    std::string rid = in["completed"].get<std::string>();
    start = Clock::now();
    auto done = s.ValidationCompleted(rid, in["metric"].get<double>(), length);
    if (!done.ok()) return Fail(done.status().message());
    std::vector<Action> out = std::move(done).value();
    for (Action& a : s.TrialExited(rid)) out.push_back(std::move(a));
    us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (Emit(s, out, us)) return 0;
  }
  return 0;
}
