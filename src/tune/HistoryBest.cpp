#include "tune/HistoryBest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "support/Error.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/ShippedRecords.h"

namespace tessel::tune {

struct HistoryBest::Shared {
  std::string target;
  /// By workload key: the valid records of this target kind, in the order they are tried
  /// (measured on exactly the target first, then by cost). The first that replays on the
  /// build's DAG is applied: a broken record cannot take its task's valid ones down with it.
  std::map<std::string, std::vector<TuningRecord>> candidates;
  std::set<std::string> shippedKeys;  ///< workloads whose candidates are shipped records
  /// Why a workload that has records has no candidate: what its records are instead.
  std::map<std::string, std::string> unusable;
  std::mutex mutex;                          ///< guards the rest: a build may ask from threads
  std::vector<DispatchUse> uses;
  std::map<std::string, size_t> useOfKey;

  DispatchUse& use(const std::string& key) {
    auto [it, inserted] = useOfKey.try_emplace(key, uses.size());
    if (inserted) {
      DispatchUse fresh;
      fresh.workloadKey = key;
      uses.push_back(std::move(fresh));
    }
    return uses[it->second];
  }
};

namespace {

/// The records whose precision `target` allows; the others counted by workload in `refused`.
std::vector<TuningRecord> withPrecisionAllowed(std::vector<TuningRecord> records, const target::Target& target,
                                               std::map<std::string, int>* refused) {
  if (target.matmulPrecision == target::MatmulPrecision::Tf32) return records;
  std::vector<TuningRecord> kept;
  for (TuningRecord& r : records) {
    if (r.ok() && roundsProductsToTf32(r)) {
      if (refused) ++(*refused)[r.task.workloadKey];
      continue;
    }
    kept.push_back(std::move(r));
  }
  return kept;
}

}  // namespace

HistoryBest::HistoryBest(const std::vector<TuningRecord>& records, const target::Target& parsedTarget, std::vector<TuningRecord> shipped)
    : shared_(std::make_shared<Shared>()) {
  const std::string& target = parsedTarget.str();
  shared_->target = target;
  std::string kind = parsedTarget.kindName();
  // Records of a precision the target does not allow are left out before the shipped ones fill
  // in: they do not cover their workloads either.
  std::map<std::string, int> tf32Refused;
  std::vector<TuningRecord> all = withShippedRecords(withPrecisionAllowed(records, parsedTarget, &tf32Refused),
                                                     withPrecisionAllowed(std::move(shipped), parsedTarget, nullptr),
                                                     &shared_->shippedKeys);
  std::map<std::string, std::vector<const TuningRecord*>> byKey;
  // Of the workloads without a valid record of this kind: their failed trials, and the kinds
  // of target their valid records were measured on.
  std::map<std::string, int> failed;
  std::map<std::string, std::set<std::string>> otherKinds;
  for (const auto& record : all) {
    std::string recordKind = target::targetKindName(record.target);
    if (record.ok() && recordKind == kind) byKey[record.task.workloadKey].push_back(&record);
    else if (recordKind == kind) ++failed[record.task.workloadKey];
    else if (record.ok()) otherKinds[record.task.workloadKey].insert(record.target);
  }
  for (const auto& [key, count] : failed)
    if (!byKey.count(key))
      shared_->unusable[key] = fmt::format("its {} record{} for {} {} failed measurement{}", count, count == 1 ? "" : "s", kind,
                                           count == 1 ? "is a" : "are all", count == 1 ? "" : "s");
  for (const auto& [key, count] : tf32Refused)
    if (!byKey.count(key)) {
      std::string& why = shared_->unusable[key];
      why += fmt::format("{}its {} record{} round{} products to TF32, which target '{}' does not allow (-matmul-precision=tf32 does)",
                         why.empty() ? "" : "; ", count, count == 1 ? "" : "s", count == 1 ? "s" : "", target);
    }
  for (const auto& [key, targets] : otherKinds)
    if (!byKey.count(key)) {
      std::string& why = shared_->unusable[key];
      why += fmt::format("{}no record for {} targets, only for {}", why.empty() ? "" : "; ", kind, fmt::join(targets, ", "));
    }
  // Among the records of this kind, those measured on exactly this target come first; within
  // each group the order of rankedRecords (confirmed decisions first, then by cost).
  for (auto& [key, list] : byKey) {
    std::vector<const TuningRecord*> ranked = rankedRecords(list);
    std::stable_partition(ranked.begin(), ranked.end(), [&](const TuningRecord* r) { return r->target == target; });
    auto& candidates = shared_->candidates[key];
    for (const TuningRecord* r : ranked) candidates.push_back(*r);
  }
}

HistoryBest HistoryBest::fromLog(const std::string& path, const target::Target& target, std::vector<TuningRecord> shipped) {
  auto file = readRecords(path);
  warnSkippedLines(file, path);
  return HistoryBest(file.records, target, std::move(shipped));
}

size_t HistoryBest::size() const { return shared_->candidates.size(); }

const TuningRecord* HistoryBest::find(const std::string& workloadKey) const {
  auto it = shared_->candidates.find(workloadKey);
  return it == shared_->candidates.end() ? nullptr : &it->second.front();
}

const std::vector<TuningRecord>& HistoryBest::candidates(const std::string& workloadKey) const {
  static const std::vector<TuningRecord> kNone;
  auto it = shared_->candidates.find(workloadKey);
  return it == shared_->candidates.end() ? kNone : it->second;
}

ScheduleFunction HistoryBest::provider(ScheduleFunction fallback, std::function<void(const schedule::State&)> fits) const {
  auto shared = shared_;
  return [shared, fallback, fits](const te::ComputeDAG& dag) -> std::vector<schedule::StepPtr> {
    std::string key = dag.workloadKey();
    auto it = shared->candidates.find(key);
    std::string note;
    if (it != shared->candidates.end()) {
      // A record names stages and loops; a DAG with the same structure but other names (a
      // different fusion, another frontend) would fail in the build, and a damaged record
      // names what does not exist: each is checked here, and the next best record tried.
      int skipped = 0;
      std::string firstFailure;
      for (const TuningRecord& record : it->second) {
        try {
          schedule::State state = schedule::replay(dag, record.steps);
          if (fits) fits(state);
        } catch (const Error& e) {
          if (skipped++ == 0) firstFailure = e.what();
          continue;
        }
        std::lock_guard lock(shared->mutex);
        DispatchUse& use = shared->use(key);
        use.name = record.task.name;
        use.fromRecord = true;
        use.shipped = shared->shippedKeys.count(key) > 0;
        use.cost = record.cost();
        use.gflops = record.gflops();
        use.machine = record.machine;
        std::vector<std::string> notes;
        if (record.target != shared->target) notes.push_back(fmt::format("measured on target '{}'", record.target));
        if (skipped > 0)
          notes.push_back(fmt::format("{} preferred record{} did not apply: {}", skipped, skipped == 1 ? "" : "s", firstFailure));
        use.note = fmt::format("{}", fmt::join(notes, "; "));
        ++use.requests;
        return record.steps;
      }
      note = fmt::format("{} record{} and none applies: {}", skipped, skipped == 1 ? "" : "s", firstFailure);
    } else {
      auto why = shared->unusable.find(key);
      note = why == shared->unusable.end() ? "no record" : why->second;
    }
    {
      std::lock_guard lock(shared->mutex);
      DispatchUse& use = shared->use(key);
      use.name = dag.outputNames().empty() ? key : dag.outputNames().front();
      use.fromRecord = false;
      use.machine.reset();
      use.note = note;
      use.shipped = shared->shippedKeys.count(key) > 0;
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
  // Fallbacks grouped by reason, and names repeated within a reason counted: a network's
  // dozen ReLUs without a record are one entry, not twelve.
  std::vector<std::string> reasons;
  std::map<std::string, std::vector<std::pair<std::string, int>>> namesOf;
  size_t fallbacks = 0, shipped = 0;
  for (const auto& u : all) {
    if (u.fromRecord && u.shipped) ++shipped;
    if (u.fromRecord) continue;
    ++fallbacks;
    auto [it, inserted] = namesOf.try_emplace(u.note);
    if (inserted) reasons.push_back(u.note);
    auto named = std::find_if(it->second.begin(), it->second.end(), [&](const auto& n) { return n.first == u.name; });
    if (named == it->second.end()) it->second.emplace_back(u.name, 1);
    else ++named->second;
  }
  std::string text = fmt::format("applied tuned records to {} of {} workloads", all.size() - fallbacks, all.size());
  if (shipped > 0) text += fmt::format(" ({} shipped with tessel)", shipped);
  if (fallbacks == 0) return text;
  text += fmt::format("; fallback for {}: ", fallbacks);
  for (size_t r = 0; r < reasons.size(); ++r) {
    std::vector<std::string> names;
    for (const auto& [name, count] : namesOf[reasons[r]]) names.push_back(count == 1 ? name : fmt::format("{} x{}", name, count));
    text += fmt::format("{}{} ({})", r ? "; " : "", fmt::join(names, ", "), reasons[r]);
  }
  return text;
}

}  // namespace tessel::tune
