/// Questions asked of a set of records: the best record of each task (TVM's pick_best), the k
/// best (distill), the records of one task, and which candidates of a task were already
/// measured (so that `--resume` never measures one twice). A task is identified by its
/// workload key and target (TuningRecord::taskKey); "best" is the lowest mean cost among
/// trials without error, the earliest record winning a tie.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tune/Record.h"

namespace tessel::tune {

/// The best valid record of each task, tasks in order of their first record. Tasks with no
/// valid record have no entry.
std::vector<TuningRecord> bestRecords(const std::vector<TuningRecord>& records);

/// Up to `k` best valid records of each task, best first within a task, tasks in order of
/// their first record.
std::vector<TuningRecord> topRecords(const std::vector<TuningRecord>& records, int k);

/// The records (valid or not) of one task, in order.
std::vector<TuningRecord> recordsOfTask(const std::vector<TuningRecord>& records, const std::string& workloadKey,
                                        const std::string& target);

/// What identifies a candidate within its task: "config:<index>" for a template config (the
/// same index is the same schedule), otherwise the step list's JSON text.
std::string candidateKey(const std::vector<schedule::StepPtr>& steps, int64_t configIndex = -1);
std::string candidateKey(const TuningRecord& record);

/// Candidate keys already measured (with or without error), per task key.
using MeasuredCandidates = std::map<std::string, std::set<std::string>>;
MeasuredCandidates measuredCandidates(const std::vector<TuningRecord>& records);

}  // namespace tessel::tune
