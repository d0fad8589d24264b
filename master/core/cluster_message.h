#pragma once
// The cluster-wide message (det master cluster-message set | get | clear): Determined's checks on
// a new message and its JSON. Pure: the time is the caller's.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::core {

inline constexpr size_t kMaxClusterMessageChars = 250;

// PUT /api/v1/master/cluster_message: {message, startTime?, endTime?, duration?} (times RFC 3339,
// start default now; `duration` a length like "22h", "5d", "2w", "1h30m", exclusive with
// endTime). An error names the field, the value and the rule.
Result<store::ClusterMessageRow> ParseClusterMessage(const nlohmann::json& body, int64_t now);

// "90s", "30m", "22h", "5d", "2w" and sums of them ("1h30m"); micros.
Result<int64_t> ParseMessageDuration(const std::string& text);

// Not ended at `now` (it may not have started: GET .../cluster_message shows it to admins).
bool ClusterMessageCurrent(const store::ClusterMessageRow& m, int64_t now);
// Shown to users now (master info): started and not ended.
bool ClusterMessageActive(const store::ClusterMessageRow& m, int64_t now);

// {message, startTime, endTime?, createdTime}, times as protobuf's JSON writes them.
nlohmann::json ClusterMessageJson(const store::ClusterMessageRow& m);
// RFC 3339 in UTC with 0, 3 or 6 fractional digits, as protobuf's JSON writes a timestamp.
std::string ProtoTimestamp(int64_t micros);

}  // namespace det::master::core
