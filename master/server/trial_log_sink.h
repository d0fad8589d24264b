#pragma once
// TrialLogSink: the master's own lines in a trial's log ("Scheduling Trial 3 ...", "... exited
// with code 0"), as rows of task_logs with source "master", and the wake-up of whoever follows
// that trial's log.

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "master/server/waiters.h"
#include "master/store/store.h"

namespace det::master::server {

class TrialLogSink {
 public:
  TrialLogSink(store::Store* store, Waiters* waiters, const Clock* clock)
      : store_(store), waiters_(waiters), clock_(clock) {}

  // The row of one master line (for a decision's own batch of writes).
  store::TaskLogRow Row(int64_t trial_id, const std::string& task_id,
                        const std::string& message) const;
  // The same at a given time (any thread: no clock).
  static store::TaskLogRow RowAt(int64_t micros, int64_t trial_id, const std::string& task_id,
                                 const std::string& message);
  // Stores one line now (a failure is logged, not returned) and wakes the trial's followers.
  void Append(int64_t trial_id, const std::string& task_id, const std::string& message);
  // Wakes the followers of the trial's log (its rows were stored elsewhere).
  void Notify(int64_t trial_id);

 private:
  store::Store* store_;
  Waiters* waiters_;
  const Clock* clock_;
};

// The waiter keys of the runtime's long polls.
std::string TrialKey(int64_t trial_id);                       // searcher operations
std::string TrialLogsKey(int64_t trial_id);                   // log follow
std::string AllocationKey(const std::string& allocation_id);  // preemption, rendezvous

}  // namespace det::master::server
