/// Questions asked of a set of records: the best record of each task (TVM's pick_best), the k
/// best (distill), the records of one task, and which candidates of a task were already
/// measured (so that `--resume` never measures one twice). A task is identified by its
/// workload key and target (TuningRecord::taskKey); "best" is the lowest mean cost among
/// trials without error (see rankedRecords: confirmed records first), the earliest winning a tie.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tune/Record.h"

namespace tessel::tune {

/// Whether a record's steps replay on the DAG its task carries (Record.h: task.dag). A record
/// that does not replay must not be ranked at all: with a tiny cost it would otherwise push the
/// valid records of its task out of `records best` and leave the build without any. DAGs are
/// parsed once per distinct text.
class ReplayCheck {
 public:
  /// Empty if the record replays, or carries no DAG (older records: the build checks them on
  /// its own DAG); otherwise why it does not replay.
  std::string failure(const TuningRecord& record);

 private:
  struct ParsedDag;
  std::map<std::string, std::shared_ptr<const ParsedDag>> dags_;  ///< by DAG text
};

/// A valid (error-free) record left out of a ranking because it does not replay.
struct RejectedRecord {
  std::string taskName, workloadKey;
  double cost = 0;     ///< its mean cost in seconds
  std::string reason;
  /// "task conv2d (key ...): a record of 0.0012 ms does not replay: step 3 (split): ..."
  std::string describe() const;
};

/// The order in which a task's valid records are preferred: the confirmed ones first (the
/// decisions of interleaved re-measurements): the latest decision of each kind of search (each
/// template, the auto-scheduler), the faster of them first, so that a workload tuned both ways
/// takes the faster decision; then older decisions, the latest first; then the others by cost
/// (median), the earlier winning a tie. `records` are one task's, in file order.
std::vector<const TuningRecord*> rankedRecords(std::vector<const TuningRecord*> records);

/// The best valid record of each task, tasks in order of their first record. Tasks with no
/// valid record have no entry. Records that do not replay are not ranked (see ReplayCheck);
/// they are listed in `rejected` when given.
std::vector<TuningRecord> bestRecords(const std::vector<TuningRecord>& records, std::vector<RejectedRecord>* rejected = nullptr);

/// Up to `k` best valid records of each task, best first within a task, tasks in order of
/// their first record; records that do not replay are left out as by bestRecords, and copies
/// (`result.same_as`: not measured, the result of an earlier record with the same steps).
std::vector<TuningRecord> topRecords(const std::vector<TuningRecord>& records, int k, std::vector<RejectedRecord>* rejected = nullptr);

/// Whether a record's steps compute a product on tensor cores with its operands rounded to TF32
/// (the `mma_m16n8k8_tf32` instruction): such a record serves only a target that allows TF32.
/// An instruction tessel does not know is not TF32's (the record's replay fails and says so).
bool roundsProductsToTf32(const TuningRecord& record);

/// The records (valid or not) of one task, in order.
std::vector<TuningRecord> recordsOfTask(const std::vector<TuningRecord>& records, const std::string& workloadKey,
                                        const std::string& target);

/// What identifies a candidate within its task: its step list's JSON text. The same steps are the
/// same schedule whichever tuner or config wrote them; a config's index is not an identity, since
/// it counts in its template's space of the day (a knob added to the template renumbers it).
std::string candidateKey(const std::vector<schedule::StepPtr>& steps);
std::string candidateKey(const TuningRecord& record);

/// Candidate keys already measured (with or without error), per task key.
using MeasuredCandidates = std::map<std::string, std::set<std::string>>;
MeasuredCandidates measuredCandidates(const std::vector<TuningRecord>& records);

}  // namespace tessel::tune
