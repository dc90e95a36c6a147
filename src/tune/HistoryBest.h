/// "Apply history best": the dispatch that makes a network build use tuning records. Built
/// from the records of a log, it answers, for each function the build asks a schedule for, the
/// steps of the best record of that workload on the build's target, or else what the caller's
/// fallback gives (a template's fallback config, the default schedule). It remembers which
/// functions used a record and which fell back and why, so the build can say so instead of
/// silently running untuned code (TVM users chase "Cannot find config" warnings for this).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "target/Target.h"
#include "tune/Record.h"

namespace tessel::tune {

/// The schedule of a function: the same type as graph::ScheduleProvider, so the function
/// `provider()` returns goes straight into graph::BuildOptions::schedule.
using ScheduleFunction = std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG& dag)>;

/// How one workload was scheduled.
struct DispatchUse {
  std::string workloadKey;
  std::string name;          ///< the record's task name, or the DAG's first output
  bool fromRecord = false;
  /// Its records are tessel's shipped ones (the user's had none): with fromRecord, one of them
  /// was applied; without, none replayed (note says why).
  bool shipped = false;
  double cost = 0;           ///< the record's mean cost in seconds (fromRecord only)
  double gflops = 0;         ///< the record's GFLOPS (fromRecord only)
  /// Why it fell back — "no record", its records of this kind of target all failed, it has
  /// records only for other kinds of target, or none of its records replays — or which target
  /// the applied record was measured on.
  std::string note;
  int requests = 0;          ///< how many times the build asked for it
  /// The machine the applied record was measured on, when the record says (fromRecord only).
  std::optional<RecordMachine> machine;
};

class HistoryBest {
 public:
  /// Picks the best valid record of each workload for `target`: measured on exactly that target
  /// string if there is one, else on a target of the same kind ("cpu -mcpu=x" for "cpu";
  /// "llvm" counts as "cpu").
  /// `shipped`: tessel's shipped records (ShippedRecords.h), used only for the workloads that
  /// `records` has no valid record of this target kind for.
  /// A record whose products round their operands to TF32 serves only a target that allows it
  /// (cuda -matmul-precision=tf32); one that computes them as exactly as fp32 serves any.
  HistoryBest(const std::vector<TuningRecord>& records, const target::Target& target, std::vector<TuningRecord> shipped = {});
  /// Reads the log (skipped lines are warned about on stderr) and picks as above.
  static HistoryBest fromLog(const std::string& path, const target::Target& target, std::vector<TuningRecord> shipped = {});

  /// Workloads that have a valid record of this target kind.
  size_t size() const;
  /// The first record tried for a workload (the best measured on the target), or nullptr;
  /// provider() applies it if it replays on the build's DAG, else the next best that does.
  const TuningRecord* find(const std::string& workloadKey) const;
  /// Every valid record of a workload in the order find() and provider() try them, best first
  /// (empty when there is none): what a build that ranks records by its own measure reads.
  const std::vector<TuningRecord>& candidates(const std::string& workloadKey) const;

  /// The dispatch function: the steps of the best record of a DAG's workload whose steps
  /// replay on that DAG (and pass `fits`, when given), else `fallback(dag)`; an empty fallback
  /// means no steps. `fits` checks the replayed state for this build and throws Error when it
  /// cannot take it (a GPU build: a kernel over its device's limits, recorded on a device with
  /// others); the record is then skipped like one that does not replay. Every call is noted in
  /// uses(). The function shares state with this object.
  ScheduleFunction provider(ScheduleFunction fallback = {}, std::function<void(const schedule::State&)> fits = {}) const;

  /// The workloads asked for so far, in order of first request.
  std::vector<DispatchUse> uses() const;
  /// "applied tuned records to 9 of 11 workloads (4 shipped with tessel); fallback for 2:
  /// dense_0 (no record), ..."
  std::string summary() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};


}  // namespace tessel::tune
