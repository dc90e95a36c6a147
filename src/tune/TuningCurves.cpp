#include "tune/TuningCurves.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "support/Error.h"

namespace tessel::tune {

namespace {

/// The distinct targets of the records, in order of their first record.
std::vector<std::string> targetsOf(const std::vector<TuningRecord>& records) {
  std::vector<std::string> targets;
  for (const auto& r : records)
    if (std::find(targets.begin(), targets.end(), r.target) == targets.end()) targets.push_back(r.target);
  return targets;
}

/// Of a curve with a point per trial, the points to draw: where its value changes, and its last
/// (so a flat end is drawn as far as it goes). A long run's picture stays small.
std::vector<size_t> changePoints(const std::vector<double>& values) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < values.size(); ++i)
    if (i == 0 || i + 1 == values.size() || values[i] != values[i - 1]) kept.push_back(i);
  return kept;
}

template <class T>
void keepOnly(std::vector<T>& series, const std::vector<size_t>& kept) {
  std::vector<T> out;
  for (size_t i : kept) out.push_back(series[i]);
  series = std::move(out);
}

/// The network's estimate: sum over its tasks of weight x best cost (+inf while one has no valid
/// record), summed afresh in task order so that the same log always gives the same numbers.
double networkEstimate(const std::vector<TaskCurve>& tasks, const std::vector<double>& best) {
  double total = 0;
  for (size_t t = 0; t < tasks.size(); ++t)
    if (tasks[t].inNetwork) total += tasks[t].weight * best[t];
  return total;
}

}  // namespace

std::string curveTarget(const std::vector<TuningRecord>& records, const std::string& requested) {
  std::vector<std::string> targets = targetsOf(records);
  TESSEL_CHECK(!targets.empty(), "the log has no records to draw");
  if (!requested.empty()) {
    TESSEL_CHECK(std::find(targets.begin(), targets.end(), requested) != targets.end(),
                 "the log has no record of target '{}' (its records are of {})", requested, fmt::join(targets, ", "));
    return requested;
  }
  TESSEL_CHECK(targets.size() == 1, "the log holds records of {} targets ({}); name the one to draw (--target; in Python, target=)", targets.size(),
               fmt::join(targets, ", "));
  return targets[0];
}

TuningCurves tuningCurves(const RecordFile& log, const TuningCurveOptions& options) {
  TuningCurves curves;
  curves.target = curveTarget(log.records, options.target);
  curves.skippedLines = log.report.describeSkipped();
  curves.weighted = options.weights.has_value();

  // The tasks first, in order of their first record: the estimate sums over all of them, and is
  // unknown until each has a valid record (a sum over the tasks seen so far would only grow as
  // tuning moves to the next task).
  std::unordered_map<std::string, size_t> slot;
  for (const TuningRecord& r : log.records) {
    if (r.target != curves.target || !slot.try_emplace(r.taskKey(), curves.tasks.size()).second) continue;
    TaskCurve task;
    task.number = curves.tasks.size() + 1;
    task.name = r.task.name;
    task.workloadKey = r.task.workloadKey;
    task.flops = r.task.flops;
    if (options.weights) {
      auto weight = options.weights->find(r.task.workloadKey);
      task.inNetwork = weight != options.weights->end();
      task.weight = task.inNetwork ? weight->second : 0;
    }
    curves.tasks.push_back(std::move(task));
  }
  if (options.weights)
    TESSEL_CHECK(std::any_of(curves.tasks.begin(), curves.tasks.end(), [](const TaskCurve& t) { return t.inNetwork; }),
                 "none of the log's {} tasks of {} is a task of the network", curves.tasks.size(), curves.target);

  std::vector<double> best(curves.tasks.size(), std::numeric_limits<double>::infinity());  ///< per task, so far
  double firstTimestamp = 0, latestTimestamp = 0;
  LatencyCurve& network = curves.network;
  for (const TuningRecord& r : log.records) {
    if (r.target != curves.target) {
      ++curves.otherTargetRecords;
      continue;
    }
    int64_t index = ++curves.records;
    if (index == 1) firstTimestamp = latestTimestamp = r.result.timestamp;
    // A log joined from several runs may step back in time; the time axis stays monotone.
    latestTimestamp = std::max(latestTimestamp, r.result.timestamp);
    size_t t = slot.at(r.taskKey());
    TaskCurve& task = curves.tasks[t];
    ++task.trials;
    if (!r.ok()) ++task.errors;
    if (r.ok()) best[t] = std::min(best[t], r.cost());
    if (std::isfinite(best[t])) {
      task.trial.push_back(task.trials);
      task.gflops.push_back(task.flops / best[t] / 1e9);
    }
    double latency = networkEstimate(curves.tasks, best);
    if (std::isfinite(latency)) {
      network.trial.push_back(index);
      network.seconds.push_back(latestTimestamp - firstTimestamp);
      network.latency.push_back(latency);
    }
  }
  for (TaskCurve& task : curves.tasks) {
    std::vector<size_t> kept = changePoints(task.gflops);
    keepOnly(task.trial, kept);
    keepOnly(task.gflops, kept);
  }
  std::vector<size_t> kept = changePoints(network.latency);
  keepOnly(network.trial, kept);
  keepOnly(network.seconds, kept);
  keepOnly(network.latency, kept);
  return curves;
}

nlohmann::json tuningCurvesToJson(const TuningCurves& curves) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const TaskCurve& t : curves.tasks)
    tasks.push_back({{"number", t.number}, {"name", t.name}, {"workload_key", t.workloadKey}, {"flops", t.flops},
                     {"weight", t.weight}, {"in_network", t.inNetwork}, {"trials", t.trials}, {"errors", t.errors},
                     {"trial", t.trial}, {"gflops", t.gflops}});
  return {{"target", curves.target},
          {"records", curves.records},
          {"other_target_records", curves.otherTargetRecords},
          {"skipped_lines", curves.skippedLines},
          {"weighted", curves.weighted},
          {"tasks", std::move(tasks)},
          {"network", {{"trial", curves.network.trial}, {"seconds", curves.network.seconds}, {"latency", curves.network.latency}}}};
}

}  // namespace tessel::tune
