#include "master/webhooks/payload.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <nlohmann/json.hpp>

namespace det::master::webhooks {
namespace {

using nlohmann::json;

json Field(const std::string& type, const std::string& text) {
  return {{"type", type}, {"text", text}};
}

json Section(const json& text) { return {{"type", "section"}, {"text", text}}; }

std::string Duration(const ExperimentFacts& e, int64_t now_micros) {
  int64_t end = e.end_micros.value_or(now_micros);
  int64_t minutes = std::max<int64_t>(0, end - e.start_micros) / 60'000'000;
  return std::to_string(minutes / 60) + "h " + std::to_string(minutes % 60) + "min";
}

std::string SlackExperiment(const ExperimentFacts& e, const std::optional<CustomData>& custom,
                            const Stamp& stamp, const std::string& base_url) {
  std::string status, mark, color, shown;
  if (e.state == "COMPLETED") {
    status = "Your experiment completed successfully 🎉";
    mark = "✅ ";
    color = "#13B670";
    shown = "Completed";
  } else if (e.state == "ERROR") {
    status = "Your experiment has stopped with errors";
    mark = "❌ ";
    color = "#DD5040";
    shown = "Errored";
  } else {
    status = "The status of your experiment is " + e.state;
    color = "#009bde";
    shown = e.state;
  }
  std::string label = e.name + " (#" + std::to_string(e.id) + ")";
  std::string link = base_url.empty() ? mark + label
                                      : mark + "<" + base_url + "/det/experiments/" +
                                            std::to_string(e.id) + "/overview | " + label + ">";
  json fields = json::array({Field("mrkdwn", "*Status*: " + shown),
                             Field("mrkdwn", "*Duration*: " + Duration(e, stamp.now_micros))});
  if (!e.workspace.empty()) {
    fields.push_back(Field("mrkdwn", !base_url.empty() && e.workspace_id != 0
                                         ? "*Workspace*: <" + base_url + "/det/workspaces/" +
                                               std::to_string(e.workspace_id) + "/projects | " +
                                               e.workspace + ">"
                                         : "*Workspace*: " + e.workspace));
  }
  if (!e.project.empty()) {
    fields.push_back(Field("mrkdwn", !base_url.empty() && e.project_id != 0
                                         ? "*Project*: <" + base_url + "/det/projects/" +
                                               std::to_string(e.project_id) + " | " + e.project +
                                               ">"
                                         : "*Project*: " + e.project));
  }
  if (e.trial_id > 0)
    fields.push_back(Field("mrkdwn", "*Trial ID*: " + std::to_string(e.trial_id)));
  json message = Section(Field("plain_text", status));
  if (custom) {
    message["fields"] = json::array({Field("mrkdwn", "*Level*: " + custom->level),
                                     Field("mrkdwn", "*Title*: " + custom->title),
                                     Field("mrkdwn", "*Description*: " + custom->description)});
  }
  json experiment = Section(Field("mrkdwn", link));
  experiment["fields"] = fields;
  json body = {
      {"blocks", json::array({message})},
      {"attachments", json::array({{{"color", color}, {"blocks", json::array({experiment})}}})}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

json Envelope(const std::string& trigger_type, const json& condition, const json& data,
              const Stamp& stamp) {
  return {{"event_id", stamp.event_id},
          {"event_type", trigger_type},
          {"timestamp", stamp.now_micros / 1'000'000},
          {"condition", condition},
          {"event_data", data}};
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string ExperimentPayload(const std::string& webhook_type, const std::string& trigger_type,
                              const ExperimentFacts& e, const std::optional<CustomData>& custom,
                              const Stamp& stamp, const std::string& base_url) {
  if (webhook_type == "SLACK") return SlackExperiment(e, custom, stamp, base_url);
  int64_t duration = e.end_micros ? (*e.end_micros - e.start_micros) / 1'000'000 : 0;
  json experiment = {{"id", e.id},
                     {"state", e.state},
                     {"name", e.name},
                     {"duration", duration},
                     {"resource_pool", e.resource_pool},
                     {"slots_per_trial", e.slots_per_trial},
                     {"workspace", e.workspace},
                     {"project", e.project}};
  if (e.trial_id > 0) experiment["trial_id"] = e.trial_id;
  json data = {{"experiment", experiment}};
  if (custom) {
    data["custom_data"] = {
        {"title", custom->title}, {"description", custom->description}, {"level", custom->level}};
  }
  return Dump(Envelope(trigger_type, {{"state", e.state}}, data, stamp));
}

std::string TaskLogPayload(const std::string& webhook_type, const TaskLogFacts& t,
                           const Stamp& stamp, const std::string& base_url) {
  if (webhook_type != "SLACK") {
    json data = {{"task_log",
                  {{"task_id", t.task_id}, {"node_name", t.node_name}, {"triggering_log", t.log}}}};
    return Dump(Envelope("TASK_LOG", {{"regex", t.regex}}, data, stamp));
  }
  std::string text;
  std::string quoted = "```" + t.log + "```\nThis log matched the regex\n```" + t.regex + "```\n";
  if (t.trial_id > 0) {
    text = "Experiment ID `" + std::to_string(t.experiment_id) + "`, Trial ID `" +
           std::to_string(t.trial_id) + "`, running on node `" + t.node_name +
           "`, reported a log\n" + quoted;
    std::string path = "/det/experiments/" + std::to_string(t.experiment_id) + "/trials/" +
                       std::to_string(t.trial_id) + "/logs";
    text += base_url.empty() ? "View full logs at " + path
                             : "<" + base_url + path + " | View full logs here>";
  } else {
    text = "Task ID `" + t.task_id + "`, task type `" + t.task_type + "`, running on node `" +
           t.node_name + "`, reported a log\n" + quoted;
  }
  return Dump({{"blocks", json::array({Section(Field("mrkdwn", text))})}});
}

std::string TestPayload(const std::string& webhook_type, const Stamp& stamp) {
  if (webhook_type == "SLACK") {
    return Dump({{"blocks", json::array({Section(Field("plain_text", "test"))})}});
  }
  return Dump(
      Envelope("EXPERIMENT_STATE_CHANGE", {{"state", "COMPLETED"}}, {{"data", "test"}}, stamp));
}

std::string SignPayload(const std::string& key, int64_t timestamp_seconds,
                        const std::string& body) {
  std::string message = std::to_string(timestamp_seconds) + "," + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 0xf];
  }
  return out;
}

}  // namespace det::master::webhooks
