#include "tune/RecordQueries.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/Stmt.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "support/Json.h"
#include "te/DagJson.h"

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

struct ReplayCheck::ParsedDag {
  std::optional<te::ComputeDAG> dag;
  std::string error;  ///< why the text is not a DAG (then dag is empty)
  std::string workloadKey;
};

std::string ReplayCheck::failure(const TuningRecord& record) {
  if (!record.task.dag) return "";
  auto& parsed = dags_[*record.task.dag];
  if (!parsed) {
    auto p = std::make_shared<ParsedDag>();
    try {
      p->dag = te::dagFromJson(parseJson(*record.task.dag, "task.dag"));
      p->workloadKey = p->dag->workloadKey();
    } catch (const Error& e) {
      p->error = fmt::format("task.dag: {}", e.what());
    }
    parsed = p;
  }
  if (!parsed->dag) return parsed->error;
  if (parsed->workloadKey != record.task.workloadKey)
    return fmt::format("task.dag is not the DAG of workload key {} (its key is {})", record.task.workloadKey, parsed->workloadKey);
  try {
    schedule::replay(*parsed->dag, record.steps);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string RejectedRecord::describe() const {
  return fmt::format("task {} ({}): a record of {:.4f} ms does not replay: {}", taskName, workloadKey, cost * 1e3, reason);
}

std::vector<const TuningRecord*> rankedRecords(std::vector<const TuningRecord*> records) {
  std::vector<const TuningRecord*> latest, older, measured;
  std::set<std::string> kinds;  // of search: a template's name, "" for the auto-scheduler
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if ((*it)->result.confirmed) (kinds.insert((*it)->task.templateName).second ? latest : older).push_back(*it);
  for (const TuningRecord* r : records)
    if (!r->result.confirmed) measured.push_back(r);
  std::stable_sort(latest.begin(), latest.end(), [](auto* a, auto* b) { return a->cost() < b->cost(); });
  std::vector<const TuningRecord*> confirmed = latest;
  confirmed.insert(confirmed.end(), older.begin(), older.end());
  // Stable: of equal costs the earlier record stays ahead, so re-running gives the same pick.
  std::stable_sort(measured.begin(), measured.end(), [](auto* a, auto* b) { return a->cost() < b->cost(); });
  confirmed.insert(confirmed.end(), measured.begin(), measured.end());
  return confirmed;
}

std::vector<TuningRecord> topRecords(const std::vector<TuningRecord>& records, int k, std::vector<RejectedRecord>* rejected) {
  TESSEL_CHECK(k >= 1, "the number of records to keep per task must be at least 1, got {}", k);
  ReplayCheck check;
  std::vector<TuningRecord> kept;
  for (auto& valid : validByTask(records)) {
    std::vector<const TuningRecord*> task = rankedRecords(valid);
    int taken = 0;
    for (size_t i = 0; i < task.size() && taken < k; ++i) {
      // A copy measured nothing: its original, earlier in the log, ranks for the schedule.
      if (task[i]->result.sameAs) continue;
      std::string why = check.failure(*task[i]);
      if (!why.empty()) {
        if (rejected) rejected->push_back({task[i]->task.name, task[i]->task.workloadKey, task[i]->cost(), why});
        continue;
      }
      kept.push_back(*task[i]);
      ++taken;
    }
  }
  return kept;
}

std::vector<TuningRecord> bestRecords(const std::vector<TuningRecord>& records, std::vector<RejectedRecord>* rejected) {
  return topRecords(records, 1, rejected);
}

bool roundsProductsToTf32(const TuningRecord& record) {
  for (const auto& step : record.steps)
    if (auto tensorize = std::dynamic_pointer_cast<const schedule::TensorizeStep>(step))
      if (tensorize->intrinsic == ir::warpMmaIntrinsicName(ir::WarpMmaKind::Tf32)) return true;
  return false;
}

std::vector<TuningRecord> recordsOfTask(const std::vector<TuningRecord>& records, const std::string& workloadKey,
                                        const std::string& target) {
  std::vector<TuningRecord> of;
  for (const auto& r : records)
    if (r.task.workloadKey == workloadKey && r.target == target) of.push_back(r);
  return of;
}

std::string candidateKey(const std::vector<schedule::StepPtr>& steps) { return schedule::stepsToJson(steps).dump(); }

std::string candidateKey(const TuningRecord& record) { return candidateKey(record.steps); }

MeasuredCandidates measuredCandidates(const std::vector<TuningRecord>& records) {
  MeasuredCandidates measured;
  for (const auto& r : records) measured[r.taskKey()].insert(candidateKey(r));
  return measured;
}

}  // namespace tessel::tune
