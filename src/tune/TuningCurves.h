/// The curves of a tuning run, from its records log in file order: for each task, its best
/// throughput (GFLOPS) after each of its trials; for the network, its estimated latency — the
/// sum over tasks of weight x best cost so far, as the task scheduler estimates it
/// (tune/TaskScheduler.h) — as trials are spent and time passes. What `tessel records plot` and
/// `tessel.records.plot` draw (the drawing is Python's: src/python/tessel/records_plot.py reads
/// tuningCurvesToJson), the picture a user looks at to decide whether to tune longer.
///
/// The curves are of one target: a log may hold the records of several (a task is its workload
/// key and target), and a network's latency is of one device.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tune/RecordLog.h"

namespace tessel::tune {

/// One task's best throughput over its trials, a point where it improved and one at its last
/// trial (so a flat end shows as far as the task was tuned).
struct TaskCurve {
  size_t number = 0;  ///< from 1, tasks in order of their first record
  std::string name, workloadKey;
  double flops = 0;   ///< of one run of it
  double weight = 1;  ///< how many times the network runs it
  bool inNetwork = true;  ///< false: weights were given and this task is none of the network's
  int64_t trials = 0;  ///< its records, errors included
  int64_t errors = 0;  ///< of which failed
  std::vector<int64_t> trial;  ///< the task's trial (from 1) of each point
  std::vector<double> gflops;  ///< its best GFLOPS after that trial
};

/// The network's estimated latency, a point where it changed and one at the last record. It
/// starts at the first record after which every task of the sum has a valid record (before, a
/// task of unknown cost leaves the sum unknown).
struct LatencyCurve {
  std::vector<int64_t> trial;   ///< the record (from 1, among the target's) of each point
  std::vector<double> seconds;  ///< since the target's first record ended (its timestamp)
  std::vector<double> latency;  ///< the estimate after that record, in seconds
};

struct TuningCurves {
  std::string target;
  int64_t records = 0;            ///< the target's records
  int64_t otherTargetRecords = 0; ///< records of other targets, left out
  std::string skippedLines;       ///< RecordReadReport::describeSkipped (empty: none skipped)
  bool weighted = false;          ///< the weights came from the network (else every task weighs 1)
  std::vector<TaskCurve> tasks;
  LatencyCurve network;
};

/// The one target of a log's records whose curves are drawn: `requested` when given (Error if the
/// log has no record of it), else the log's only target; Error naming them when it has several,
/// or when it has no record at all.
std::string curveTarget(const std::vector<TuningRecord>& records, const std::string& requested);

struct TuningCurveOptions {
  std::string target;  ///< see curveTarget
  /// How many times the network runs each task, by the workload key its records carry. Unset:
  /// every task weighs 1. Set: a task not in it is not the network's and stays out of the sum;
  /// Error if no task of the log is the network's.
  std::optional<std::map<std::string, double>> weights;
};

/// The curves of the log's records (in file order) of the target.
TuningCurves tuningCurves(const RecordFile& log, const TuningCurveOptions& options);

/// The curves as the drawing reads them: {"target", "records", "other_target_records",
/// "skipped_lines", "weighted", "tasks": [{"number", "name", "workload_key", "weight",
/// "flops", "in_network", "trials", "errors", "trial": [...], "gflops": [...]}], "network": {"trial",
/// "seconds", "latency"}}.
nlohmann::json tuningCurvesToJson(const TuningCurves& curves);

}  // namespace tessel::tune
