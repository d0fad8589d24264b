#pragma once
// What a webhook delivery posts, in Determined's shapes: a DEFAULT webhook gets an event
// ({event_id, event_type, timestamp, condition, event_data}); a SLACK one a Slack message
// (blocks and a coloured attachment). The event id and the time are the caller's. Pure.

#include <cstdint>
#include <optional>
#include <string>

namespace det::master::webhooks {

struct ExperimentFacts {
  int64_t id = 0;
  std::string state;  // COMPLETED, ERROR, ...
  std::string name;
  int64_t start_micros = 0;
  std::optional<int64_t> end_micros;
  std::string resource_pool;
  int64_t slots_per_trial = 1;
  std::string workspace;  // names ("" when unknown)
  std::string project;
  int64_t workspace_id = 0;  // for links in Slack messages (0: no link)
  int64_t project_id = 0;
  int64_t trial_id = 0;  // a CUSTOM event's trial (0: none)
};

// core_context.alert(title, description, level).
struct CustomData {
  std::string title;
  std::string description;
  std::string level;  // LOG_LEVEL_*
};

struct TaskLogFacts {
  std::string task_id;
  std::string task_type;      // TRIAL, COMMAND, NOTEBOOK, ...
  int64_t experiment_id = 0;  // a trial's
  int64_t trial_id = 0;
  std::string node_name;  // the agent the line came from
  std::string log;
  std::string regex;
};

struct Stamp {
  std::string event_id;  // a UUID
  int64_t now_micros = 0;
};

// `trigger_type`: EXPERIMENT_STATE_CHANGE or CUSTOM (with `custom`).
std::string ExperimentPayload(const std::string& webhook_type, const std::string& trigger_type,
                              const ExperimentFacts& e, const std::optional<CustomData>& custom,
                              const Stamp& stamp, const std::string& base_url);
std::string TaskLogPayload(const std::string& webhook_type, const TaskLogFacts& t,
                           const Stamp& stamp, const std::string& base_url);
// POST /api/v1/webhooks/{id}/test.
std::string TestPayload(const std::string& webhook_type, const Stamp& stamp);

// The X-Determined-AI-Signature of a delivery: hex HMAC-SHA256 of "<timestamp>,<body>".
std::string SignPayload(const std::string& key, int64_t timestamp_seconds, const std::string& body);

}  // namespace det::master::webhooks
