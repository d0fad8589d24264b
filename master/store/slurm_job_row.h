#pragma once
// A row of slurm_jobs (migration 0017): the Slurm job that runs one allocation.

#include <cstdint>
#include <string>

namespace det::master::store {

struct SlurmJobRow {
  std::string allocation_id;
  std::string job_id;
  std::string pool;
  std::string partition;
  int64_t nodes = 1;
  int64_t submitted_at = 0;  // micros
  bool ended = false;        // Slurm has finished with it (or lost it)
};

}  // namespace det::master::store
