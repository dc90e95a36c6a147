#include "tune/ShippedRecords.h"

#include <algorithm>
#include <sstream>

#include "support/Error.h"
#include "tune/HistoryBest.h"
#include "tune/RecordQueries.h"
#include "tune/ShippedRecordsData.h"

namespace tessel::tune {

std::vector<std::string> shippedRecordSets() {
  std::vector<std::string> names;
  for (const ShippedLog& log : shippedLogs()) names.emplace_back(log.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<TuningRecord> shippedRecords(const std::string& set) {
  std::vector<TuningRecord> records;
  for (const ShippedLog& log : shippedLogs()) {
    if (log.name != set) continue;
    std::istringstream lines{std::string(log.text)};
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (line.empty()) continue;
      try {
        records.push_back(recordFromLine(line));
      } catch (const Error& e) {
        throw e.withContext(fmt::format("shipped records records/{}.log, line {}", set, number));
      }
    }
  }
  return records;
}

std::string shippedRecordSetForCpu(const target::Target& target) { return "cpu/" + target.cpu.recordFamily(); }

std::string shippedRecordSetForGpu(const target::Target& target) {
  if (target.kind != target::TargetKind::Cuda) return "";
  return "cuda/" + target.arch;
}

std::vector<TuningRecord> withShippedRecords(std::vector<TuningRecord> records, std::vector<TuningRecord> shipped,
                                             std::set<std::string>* added) {
  std::set<std::pair<std::string, std::string>> covered;  // (target kind, workload key)
  for (const TuningRecord& r : records)
    if (r.ok()) covered.emplace(target::targetKindName(r.target), r.task.workloadKey);
  std::set<std::string> keys;
  for (TuningRecord& r : shipped) {
    if (covered.count({target::targetKindName(r.target), r.task.workloadKey})) continue;
    keys.insert(r.task.workloadKey);
    records.push_back(std::move(r));
  }
  if (added) *added = std::move(keys);
  return records;
}

}  // namespace tessel::tune
