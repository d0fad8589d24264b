// SqliteStore: the Slurm job of each allocation (migration 0017).
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

Status SqliteStore::UpsertSlurmJob(const SlurmJobRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO slurm_jobs (allocation_id, job_id, pool, partition_name, nodes, "
              "submitted_at, ended) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (allocation_id) DO "
              "UPDATE SET job_id = excluded.job_id, pool = excluded.pool, partition_name = "
              "excluded.partition_name, nodes = excluded.nodes, submitted_at = "
              "excluded.submitted_at, ended = excluded.ended");
  return s.Bind(1, row.allocation_id)
      .Bind(2, row.job_id)
      .Bind(3, row.pool)
      .Bind(4, row.partition)
      .Bind(5, row.nodes)
      .Bind(6, row.submitted_at)
      .Bind(7, row.ended)
      .Run();
}

Result<std::vector<SlurmJobRow>> SqliteStore::ListOpenSlurmJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT allocation_id, job_id, pool, partition_name, nodes, submitted_at FROM "
              "slurm_jobs WHERE ended = 0 ORDER BY submitted_at, allocation_id");
  return s.Collect<SlurmJobRow>([](const Statement& r) {
    SlurmJobRow row;
    row.allocation_id = r.Text(0);
    row.job_id = r.Text(1);
    row.pool = r.Text(2);
    row.partition = r.Text(3);
    row.nodes = r.Int(4);
    row.submitted_at = r.Int(5);
    return row;
  });
}

}  // namespace det::master::store
