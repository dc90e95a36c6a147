#include "vta/ShippedRecords.h"

#include <set>
#include <string>

#include "tune/ShippedRecords.h"

namespace tessel::vta {

std::vector<tune::TuningRecord> shippedRecords(const HardwareConfig& config) {
  return tune::shippedRecords("vta/" + config.modelName());
}

std::vector<tune::TuningRecord> withShippedRecords(std::vector<tune::TuningRecord> records, const std::vector<VtaConv2dTask>& tasks,
                                                   const HardwareConfig& config, int* added) {
  std::set<std::string> wanted;
  for (const VtaConv2dTask& t : tasks) wanted.insert(t.task->measure->workloadKey);
  std::vector<tune::TuningRecord> shipped;
  for (tune::TuningRecord& r : shippedRecords(config))
    if (wanted.count(r.task.workloadKey)) shipped.push_back(std::move(r));
  std::set<std::string> keys;
  records = tune::withShippedRecords(std::move(records), std::move(shipped), &keys);
  if (added) *added = static_cast<int>(keys.size());
  return records;
}

}  // namespace tessel::vta
