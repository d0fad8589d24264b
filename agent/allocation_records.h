#pragma once
// AllocationRecords: one small JSON file per launched allocation in <data_dir>/allocations, kept
// while its process group may be alive. An agent restarted after a kill -9 reads them to find the
// processes its previous run left behind (see orphan_cleanup.h).

#include <string>
#include <vector>

#include "common/status.h"

namespace det::agent {

struct AllocationRecord {
  std::string allocation_id;
  // The DET_WORKDIR the processes were given (<data_dir>/work/<allocation_id>).
  std::string workdir;
  // The process group leader (its pid is the pgid); 0 until the launch returned.
  int pid = 0;
};

class AllocationRecords {
 public:
  explicit AllocationRecords(std::string data_dir);

  // Creates or replaces the record of record.allocation_id (write to a temp file, rename).
  Status Write(const AllocationRecord& record) const;
  // Removes the record; a missing one is not an error.
  Status Remove(const std::string& allocation_id) const;
  // Every record on disk. A file that cannot be parsed still yields its allocation id (from the
  // file name) so that its processes can be found by their environment.
  Result<std::vector<AllocationRecord>> List() const;

  const std::string& dir() const { return dir_; }

 private:
  std::string PathOf(const std::string& allocation_id) const;

  std::string dir_;
};

// An allocation id usable as one path component (the agent rejects others before launching).
bool IsValidAllocationId(const std::string& allocation_id);

// The private work directory of an allocation: <data_dir>/work/<allocation_id>.
std::string AllocationWorkDir(const std::string& data_dir, const std::string& allocation_id);

}  // namespace det::agent
