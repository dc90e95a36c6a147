/// The trials a resumed template tuning takes from its log. A record names its config by index
/// and by entity (the knob values); only the entity means the same thing after the template's
/// space changed (a knob added, an option more), so each record is mapped into today's space by
/// its entity. A record whose entity does not fit (a knob the space lacks, a value not among the
/// options) is left out and counted with the reason, so that the run can say so. A record written
/// before one of today's knobs existed lands on that knob's first option, and only if that config
/// instantiates to the record's own steps: then it is the schedule the record measured.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tune/Record.h"
#include "tune/autotvm/Tuner.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

struct ResumedTrials {
  std::vector<Trial> trials;  ///< in log order, indices of today's space
  int64_t records = 0;        ///< the task's template records looked at (confirmations not counted)
  std::map<std::string, int64_t> leftOut;  ///< why a record was left out -> how many

  int64_t leftOutCount() const;
  /// Adds another task's (for a run's total).
  void accumulate(const ResumedTrials& other);
  /// One line for the run, "" when nothing was left out: "--resume: 3 of 120 records left out,
  /// their configs are not in today's spaces: knob 'x' is not in the space (2), ...".
  std::string leftOutLine() const;
};

/// The trials of `task` among `records` (any log: other tasks' records are skipped): records of
/// its workload, target and template, mapped by entity; confirmations, which measure again a
/// config that the log already holds, are skipped.
ResumedTrials resumedTrials(const TuningTask& task, const std::vector<TuningRecord>& records);

/// resumedTrials of each task (the trials, in the tasks' order), and in `total` the run's counts.
std::vector<std::vector<Trial>> resumedTrialsOfTasks(const std::vector<TuningTaskPtr>& tasks, const std::vector<TuningRecord>& records,
                                                     ResumedTrials& total);

}  // namespace tessel::tune::autotvm
