/// One tuning record: what was measured (target, task, schedule) and how it went (the
/// MeasureResult), as one line of the records log. The schedule is always the full replayable
/// step list, whichever tuner produced it, so any record can be rebuilt without the tuner;
/// a template record also keeps its template, config index and config entity so a template
/// tuner can resume or transfer-learn from it. The JSON is versioned and read strictly: an
/// unknown version, a missing field or a field of the wrong type is an Error naming the field.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedule/Steps.h"
#include "tune/Measure.h"

namespace tessel::tune {

/// The version this tessel writes and reads. Bump it on any change a reader must know about,
/// and teach recordFromJson to read the older versions (TVM users lost logs to format drift).
inline constexpr int kRecordVersion = 1;

/// The most FLOPs a task's one call may have: far above any network's layer (1e12), and low
/// enough that FLOPs over the least cost stays finite.
inline constexpr double kMaxRecordFlops = 1e18;

/// What the record tuned.
struct RecordTask {
  std::string workloadKey;  ///< te::ComputeDAG::workloadKey() of the task's DAG
  std::string name;         ///< readable ("conv2d_nchw"); not part of the identity
  double flops = 0;         ///< of one call, to print GFLOPS
  /// For template tuning: the template's registered name and its arguments (shapes, strides,
  /// ...) as the template defines them. Empty name and null args otherwise.
  std::string templateName;
  nlohmann::json templateArgs;
  /// The task's compute DAG as compact te/DagJson text: what the steps replay on, so a record
  /// can be checked with the log alone. Null in records written before records carried it.
  std::shared_ptr<const std::string> dag;
  bool fromTemplate() const { return !templateName.empty(); }
};

/// The config of a template record: one point of the template's config space.
struct RecordConfig {
  int64_t index = -1;     ///< the config's index in its space
  nlohmann::json entity;  ///< the knob values, as the config space serializes them
};

/// The CPU a record was measured on: its class and cores, what decides whether its schedule
/// (lanes, register tile, parallel partition) fits another machine. Records of CPU targets carry
/// it from the target's machine model ("machine" in the log); older records do not.
struct RecordMachine {
  std::string family;    ///< its record family (CpuMachine::recordFamily; "class" in the log): "x86_64-avx2", "x86_64-avx2-zen", ...
  int cores = 0;         ///< the cores its kernels were divided for
  std::string cpu;       ///< the CPU's name ("AMD EPYC", "haswell")
  bool operator==(const RecordMachine&) const = default;
};

struct TuningRecord {
  int version = kRecordVersion;
  std::string target;  ///< the target string the candidate was measured on
  std::optional<RecordMachine> machine;  ///< a CPU target's machine; unset for other targets and older records
  RecordTask task;
  std::vector<schedule::StepPtr> steps;  ///< replays to the measured schedule
  std::optional<RecordConfig> config;    ///< set exactly when task.fromTemplate()
  MeasureResult result;

  bool ok() const { return result.ok(); }
  /// The cost in seconds (the median of the costs); +infinity for a failed trial.
  double cost() const { return result.cost(); }
  /// GFLOPS at that cost; 0 for a failed trial.
  double gflops() const;
  /// The task's identity across runs: workload key and target, as MeasureTask::key().
  std::string taskKey() const { return task.workloadKey + " @ " + target; }
};

/// A record of one finished trial of `input`. Template tuners pass the template's name, its
/// arguments and the config; other tuners leave `config` empty.
TuningRecord makeRecord(const MeasureInput& input, const MeasureResult& result, const std::string& templateName = "",
                        const nlohmann::json& templateArgs = nullptr, std::optional<RecordConfig> config = std::nullopt);

/// The record as one JSON object. Throws Error if a number cannot be written faithfully
/// (a cost or time that is not finite: JSON has no infinity).
nlohmann::json recordToJson(const TuningRecord& record);
/// Reads a record; an Error names the offending field ("result.costs[2]: expected a number").
TuningRecord recordFromJson(const nlohmann::json& j);

/// The record as one line of the log, without the newline.
std::string recordToLine(const TuningRecord& record);
/// Parses one line of the log; an Error says whether it is not JSON or not a record.
TuningRecord recordFromLine(const std::string& line);

}  // namespace tessel::tune
