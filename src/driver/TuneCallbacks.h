/// What a network's tuning run (driver::tuneNetwork) reports while it runs, each an optional
/// std::function called in the order of the run: the CLI prints `tessel tune`'s lines from
/// them (cli/TuneCommand.cpp), a test counts them, a binding can forward them. Each is called on
/// the run's thread; an exception it throws ends the run.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/TuneNetworkResult.h"
#include "driver/TuningTasks.h"
#include "tune/Record.h"

namespace tessel::driver {

/// The run's stages that begin with a line of their own.
enum class TuneStage {
  ExtractTasks,  ///< the network prepared and its tasks listed
  Compile,       ///< the build with the best records
  Evaluate,      ///< the tuned module timed
};

/// The trials the search is about to spend (what the log already holds counted against them).
struct TuningPlan {
  SearchKind search = SearchKind::Templates;
  size_t tasks = 0;
  int64_t trials = 0;   ///< at most
  int64_t nTrial = 0;   ///< the budget asked for
  bool forNetwork = false;  ///< `nTrial` is the network's (a task scheduler), not each task's
};

/// One trial of a task, as logged.
struct TrialReport {
  const ListedTask* task = nullptr;
  int64_t trial = 0;  ///< of the task in this run, from 1
  const tune::TuningRecord* record = nullptr;
};

struct TuneCallbacks {
  std::function<void(TuneStage)> onStage;
  /// A line about the run's setup or state: the log resumed, a busy machine and the threads
  /// measuring, the GPU limits verified against, resumed records left out.
  std::function<void(const std::string& line)> onNote;
  /// The network's task list, and the tasks this run tunes (the options' selection).
  std::function<void(const TaskList& list, const std::vector<ListedTask>& selected)> onTasks;
  std::function<void(const TuningPlan&)> onPlan;
  /// Before a task is searched (each of its rounds under a task scheduler), with the trials the
  /// search may spend; after, with the task's tuning so far.
  std::function<void(const ListedTask& task, int64_t trials)> onTaskStart;
  std::function<void(const ListedTask& task, const TunedTask& sofar)> onTaskFinish;
  /// Every trial, once it is in the log (the confirmations' decisions go to onDecision).
  std::function<void(const TrialReport&)> onTrial;
  /// Each task's confirmation, once logged: after its search (each task in turn: before its
  /// onTaskFinish), or after the last round under a task scheduler.
  std::function<void(const TaskDecision&)> onDecision;
  std::function<void(const TuningSummary&)> onTuned;  ///< after the last task
  std::function<void(const BuildReport&)> onBuilt;
  std::function<void(const NetworkEvaluation&)> onEvaluated;
};

}  // namespace tessel::driver
