#include "tune/RecordQueries.h"

#include <algorithm>
#include <unordered_map>

#include "support/Error.h"

namespace tessel::tune {

namespace {

/// The valid records of each task, in file order, tasks in order of first appearance (of any
/// record, valid or not, so that the order does not shift when errors come first).
std::vector<std::vector<const TuningRecord*>> validByTask(const std::vector<TuningRecord>& records) {
  std::unordered_map<std::string, size_t> slot;
  std::vector<std::vector<const TuningRecord*>> tasks;
  for (const auto& r : records) {
    auto [it, inserted] = slot.try_emplace(r.taskKey(), tasks.size());
    if (inserted) tasks.emplace_back();
    if (r.ok()) tasks[it->second].push_back(&r);
  }
  return tasks;
}

}  // namespace

std::vector<TuningRecord> topRecords(const std::vector<TuningRecord>& records, int k) {
  TESSEL_CHECK(k >= 1, "the number of records to keep per task must be at least 1, got {}", k);
  std::vector<TuningRecord> kept;
  for (auto& task : validByTask(records)) {
    // Stable: of equal costs the earlier record stays ahead, so re-running gives the same pick.
    std::stable_sort(task.begin(), task.end(), [](auto* a, auto* b) { return a->meanCost() < b->meanCost(); });
    for (size_t i = 0; i < task.size() && int(i) < k; ++i) kept.push_back(*task[i]);
  }
  return kept;
}

std::vector<TuningRecord> bestRecords(const std::vector<TuningRecord>& records) { return topRecords(records, 1); }

std::vector<TuningRecord> recordsOfTask(const std::vector<TuningRecord>& records, const std::string& workloadKey,
                                        const std::string& target) {
  std::vector<TuningRecord> of;
  for (const auto& r : records)
    if (r.task.workloadKey == workloadKey && r.target == target) of.push_back(r);
  return of;
}

std::string candidateKey(const std::vector<schedule::StepPtr>& steps, int64_t configIndex) {
  if (configIndex >= 0) return "config:" + std::to_string(configIndex);
  return schedule::stepsToJson(steps).dump();
}

std::string candidateKey(const TuningRecord& record) {
  return candidateKey(record.steps, record.config ? record.config->index : -1);
}

MeasuredCandidates measuredCandidates(const std::vector<TuningRecord>& records) {
  MeasuredCandidates measured;
  for (const auto& r : records) measured[r.taskKey()].insert(candidateKey(r));
  return measured;
}

}  // namespace tessel::tune
