// LengthToBatches: the 0.13-0.37 conversion of searcher lengths between units.

#include "master/config/experiment_config.h"

namespace det::master::config {

namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

Result<uint64_t> LengthToBatches(const Length& length, int64_t records_per_epoch,
                                 std::optional<int64_t> global_batch_size) {
  switch (length.unit) {
    case Length::Unit::kBatches:
    case Length::Unit::kUnitless:
      return length.value;
    case Length::Unit::kRecords:
      if (!global_batch_size || *global_batch_size < 1) {
        return InvalidArgument(
            "hyperparameters.global_batch_size: required (a constant > 0) to convert records "
            "to batches");
      }
      return CeilDiv(length.value, static_cast<uint64_t>(*global_batch_size));
    case Length::Unit::kEpochs:
      if (records_per_epoch < 1) {
        return InvalidArgument("records_per_epoch: required (> 0) to convert epochs to batches");
      }
      if (!global_batch_size || *global_batch_size < 1) {
        return InvalidArgument(
            "hyperparameters.global_batch_size: required (a constant > 0) to convert epochs "
            "to batches");
      }
      if (length.value > UINT64_MAX / static_cast<uint64_t>(records_per_epoch)) {
        return InvalidArgument("length out of range");
      }
      return CeilDiv(length.value * static_cast<uint64_t>(records_per_epoch),
                     static_cast<uint64_t>(*global_batch_size));
  }
  return InvalidArgument("unknown length unit");
}

}  // namespace det::master::config
