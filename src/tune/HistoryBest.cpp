#include "tune/HistoryBest.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <sstream>

#include "support/Error.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"

namespace tessel::tune {

struct HistoryBest::Shared {
  std::string target;
  std::map<std::string, TuningRecord> best;  ///< by workload key
  std::mutex mutex;                          ///< guards the rest: a build may ask from threads
  std::vector<DispatchUse> uses;
  std::map<std::string, size_t> useOfKey;

  DispatchUse& use(const std::string& key) {
    auto [it, inserted] = useOfKey.try_emplace(key, uses.size());
    if (inserted) uses.push_back(DispatchUse{key, "", false, 0, 0, "", 0});
    return uses[it->second];
  }
};

std::string targetKind(const std::string& target) {
  std::istringstream words(target);
  std::string kind;
  words >> kind;
  return kind == "llvm" ? "cpu" : kind;
}

HistoryBest::HistoryBest(const std::vector<TuningRecord>& records, const std::string& target) : shared_(std::make_shared<Shared>()) {
  shared_->target = target;
  std::string kind = targetKind(target);
  // bestRecords picks per (workload, target string); among the records of this kind, one
  // measured on exactly this target wins over a faster one measured on another.
  for (auto& record : bestRecords(records)) {
    if (targetKind(record.target) != kind) continue;
    auto it = shared_->best.find(record.task.workloadKey);
    if (it == shared_->best.end()) {
      shared_->best.emplace(record.task.workloadKey, std::move(record));
      continue;
    }
    bool exact = record.target == target, oldExact = it->second.target == target;
    if ((exact && !oldExact) || (exact == oldExact && record.meanCost() < it->second.meanCost())) it->second = std::move(record);
  }
}

HistoryBest HistoryBest::fromLog(const std::string& path, const std::string& target) {
  auto file = readRecords(path);
  warnSkippedLines(file, path);
  return HistoryBest(file.records, target);
}

size_t HistoryBest::size() const { return shared_->best.size(); }

const TuningRecord* HistoryBest::find(const std::string& workloadKey) const {
  auto it = shared_->best.find(workloadKey);
  return it == shared_->best.end() ? nullptr : &it->second;
}

ScheduleFunction HistoryBest::provider(ScheduleFunction fallback) const {
  auto shared = shared_;
  return [shared, fallback](const te::ComputeDAG& dag) -> std::vector<schedule::StepPtr> {
    std::string key = dag.workloadKey();
    auto it = shared->best.find(key);
    std::string note;
    if (it != shared->best.end()) {
      const TuningRecord& record = it->second;
      // A record names stages and loops; a DAG with the same structure but other names (a
      // different fusion, another frontend) would fail in the build, so check it here and
      // fall back with the reason instead.
      try {
        schedule::replay(dag, record.steps);
        std::lock_guard lock(shared->mutex);
        DispatchUse& use = shared->use(key);
        use.name = record.task.name;
        use.fromRecord = true;
        use.cost = record.meanCost();
        use.gflops = record.gflops();
        if (record.target != shared->target) use.note = fmt::format("measured on target '{}'", record.target);
        ++use.requests;
        return record.steps;
      } catch (const Error& e) {
        note = fmt::format("its record does not replay: {}", e.what());
      }
    } else {
      note = "no record";
    }
    {
      std::lock_guard lock(shared->mutex);
      DispatchUse& use = shared->use(key);
      use.name = dag.outputNames().empty() ? key : dag.outputNames().front();
      use.fromRecord = false;
      use.note = note;
      ++use.requests;
    }
    return fallback ? fallback(dag) : std::vector<schedule::StepPtr>{};
  };
}

std::vector<DispatchUse> HistoryBest::uses() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->uses;
}

std::string HistoryBest::summary() const {
  auto all = uses();
  std::vector<std::string> fallbacks;
  for (const auto& u : all)
    if (!u.fromRecord) fallbacks.push_back(fmt::format("{} ({})", u.name, u.note));
  std::string text = fmt::format("applied tuned records to {} of {} workloads", all.size() - fallbacks.size(), all.size());
  if (!fallbacks.empty()) {
    text += fmt::format("; fallback for {}: ", fallbacks.size());
    for (size_t i = 0; i < fallbacks.size(); ++i) text += (i ? ", " : "") + fallbacks[i];
  }
  return text;
}

}  // namespace tessel::tune
