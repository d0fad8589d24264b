#include "cli/job_update_parse.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace det::cli {
namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t pos = text.find(sep, start);
    if (pos == std::string::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

std::optional<int64_t> ParseInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno != 0) return std::nullopt;
  return n;
}

std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno != 0 || !std::isfinite(d)) return std::nullopt;
  return d;
}

}  // namespace

Result<nlohmann::json> BuildJobUpdate(const std::string& job_id, const JobUpdateFlags& flags) {
  nlohmann::json update = {{"jobId", job_id}};
  int set = 0;
  if (flags.priority) update["priority"] = *flags.priority, ++set;
  if (flags.weight) update["weight"] = *flags.weight, ++set;
  if (flags.resource_pool) update["resourcePool"] = *flags.resource_pool, ++set;
  if (flags.ahead_of) update["aheadOf"] = *flags.ahead_of, ++set;
  if (flags.behind_of) update["behindOf"] = *flags.behind_of, ++set;
  if (set != 1) {
    return InvalidArgument(
        "exactly one of --priority, --weight, --resource-pool, --ahead-of, --behind-of is "
        "required");
  }
  return update;
}

Result<nlohmann::json> ParseBatchJobUpdate(const std::string& item) {
  std::vector<std::string> values = Split(item, '.');
  if (values.size() != 2) {
    return InvalidArgument("Job " + values[0] +
                           " and its operation have an invalid format. Please ensure the update "
                           "is formatted as <jobID>.<operation>=<value>.");
  }
  const std::string& job_id = values[0];
  std::vector<std::string> operand = Split(values[1], '=');
  if (operand.size() != 2) {
    return InvalidArgument("The operation for job " + job_id +
                           " has invalid format. Please ensure the operation is formatted as "
                           "<operation>=<value>.");
  }
  const std::string& op = operand[0];
  const std::string& value = operand[1];
  nlohmann::json update = {{"jobId", job_id}};
  if (op == "priority") {
    std::optional<int64_t> n = ParseInt(value);
    if (!n) {
      return InvalidArgument("The priority for job " + job_id + " must be an integer, not '" +
                             value + "'.");
    }
    update["priority"] = *n;
  } else if (op == "weight") {
    std::optional<double> w = ParseNumber(value);
    if (!w) {
      return InvalidArgument("The weight for job " + job_id + " must be a number, not '" +
                             value + "'.");
    }
    update["weight"] = *w;
  } else if (op == "resource-pool" || op == "resource_pool") {
    update["resourcePool"] = value;
  } else if (op == "ahead-of" || op == "ahead_of") {
    update["aheadOf"] = value;
  } else if (op == "behind-of" || op == "behind_of") {
    update["behindOf"] = value;
  } else {
    return InvalidArgument("Invalid operation " + op + " specified for job " + job_id +
                           ". Supported commands include: ('priority', 'weight', "
                           "'resource_pool', 'ahead_of', 'behind_of').");
  }
  return update;
}

}  // namespace det::cli
