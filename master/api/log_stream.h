#pragma once
// The log streams of a trial or task: GET .../logs (filtered, limited, ordered, followed) and
// GET .../logs/fields (the distinct filter values, followed until the task ends), both as
// newline-delimited {"result": ...} chunks. A LogSource says where the lines come from, so a
// trial (by trial id), a trial's task id and a command share one implementation.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/server/http_server.h"
#include "master/store/store.h"

namespace det::master::api {

struct LogSource {
  // Lines with id > after_id, at most `limit` (0: all), newest first when `descending`.
  std::function<Result<std::vector<store::TaskLogRow>>(int64_t after_id, int64_t limit,
                                                       bool descending)>
      read;
  // True once nothing more will be logged (checked before a read, so lines logged meanwhile are
  // still read).
  std::function<bool()> finished;
  // Blocks until something may have been logged, or about a second passes.
  std::function<void()> wait;
};

server::HttpResponse StreamLogLines(LogSource source, server::HttpRequest& req);
// `with_allocations`: a task's fields (TaskLogsFieldsResponse) rather than a trial's.
server::HttpResponse StreamLogFields(LogSource source, server::HttpRequest& req,
                                     bool with_allocations);

}  // namespace det::master::api
