#pragma once
// The task_logs table's columns as every reader selects them, and the row they make.

#include <string>

#include "master/store/sqlite/db.h"
#include "master/store/sqlite/statement.h"
#include "master/store/store.h"

namespace det::master::store {

// Log lines of one trial or task (`key_column` = ?) after an id (?), at most a limit (?), in id
// order; bind sql::kNoLimit for no limit (PostgreSQL refuses LIMIT -1).
inline std::string TaskLogQuery(const char* key_column, bool descending) {
  return std::string(
             "SELECT id, task_id, trial_id, allocation_id, agent_id, container_id, rank_id, "
             "timestamp, level, stdtype, source, log FROM task_logs WHERE ") +
         key_column + " = ? AND id > ? ORDER BY id " + (descending ? "DESC" : "ASC") +
         " LIMIT ?";
}

inline TaskLogRow ReadTaskLogRow(const Statement& s) {
  TaskLogRow r;
  r.id = s.Int(0);
  r.task_id = s.Text(1);
  r.trial_id = s.Int(2);
  r.allocation_id = s.Text(3);
  r.agent_id = s.Text(4);
  r.container_id = s.Text(5);
  r.rank_id = s.OptInt(6);
  r.timestamp = s.Int(7);
  r.level = s.Text(8);
  r.stdtype = s.Text(9);
  r.source = s.Text(10);
  r.log = s.Text(11);
  return r;
}

}  // namespace det::master::store
