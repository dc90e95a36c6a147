/// What both tuners' bindings share (tessel.autotvm in Tuning.cpp, tessel.auto_scheduler in
/// AutoScheduler.cpp): a network prepared for a target with its numbered task list, which the
/// Python task objects point into, and one logged trial as the Python callbacks see it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/PreparedModel.h"
#include "driver/TuneCallbacks.h"
#include "driver/TuneNetworkOptions.h"
#include "driver/TuningTasks.h"
#include "python/Model.h"

namespace tessel::python {

/// A network prepared for a target and its task list for one tuner, shared by its tasks (they
/// point into it, and a tuning run checks that it lists the same tasks again).
struct TaskSource {
  Model model;
  driver::PrepareOptions prepare;
  driver::PreparedModel prepared;
  driver::TaskList list;
};

/// `model` prepared for `target` (a CPU target: Error otherwise) and its tasks for `search`,
/// numbered as `tessel tasks` (`--scheduler auto` for the auto-scheduler) lists them.
std::shared_ptr<const TaskSource> makeTaskSource(const Model& model, const std::string& target, driver::SearchKind search);

/// One task of a source's list, numbered as `tessel tasks` lists it: `Search` tells the two
/// tuners' task types apart (tessel.autotvm.Task, tessel.auto_scheduler.SearchTask).
template <driver::SearchKind Search>
struct ListedTaskOf {
  std::shared_ptr<const TaskSource> source;
  size_t index = 0;  ///< in source->list.tasks
  const driver::ListedTask& listed() const { return source->list.tasks[index]; }
};

/// The tasks of `model` for `target` and the tuner of `Search`, in the list's order.
template <driver::SearchKind Search>
std::vector<ListedTaskOf<Search>> extractTasksOf(const Model& model, const std::string& target) {
  auto source = makeTaskSource(model, target, Search);
  std::vector<ListedTaskOf<Search>> tasks;
  for (size_t i = 0; i < source->list.tasks.size(); ++i) tasks.push_back({source, i});
  return tasks;
}

/// One trial as a tuner's Python callbacks see it (TVM's MeasureInput and MeasureResult in one).
struct Trial {
  size_t task = 0;   ///< the task's number
  int64_t trial = 0; ///< of this tune() call, from 1
  int64_t configIndex = -1;  ///< template tuning: the config's index; else -1
  std::string config;        ///< template tuning: the knob values as JSON; else empty
  std::string steps;         ///< the schedule as steps, one per line (printSteps)
  std::vector<double> costs;
  int errorNo = 0;
  std::string errorName, errorMessage;
  double allCost = 0, timestamp = 0;
};

Trial trialOf(const driver::TrialReport& report);

/// A tuning run's onTrial callback that hands each logged trial to `onTrial` (a Python callable,
/// called with the GIL; none: nobody) and then honours Ctrl-C (Interrupts.h). The run calls it
/// without the GIL.
std::function<void(const driver::TrialReport&)> forwardTrials(std::function<void(const Trial&)> onTrial);

/// The options of a run that tunes `asked` (tasks of `source`'s list) with `search`, appending
/// to `log`, without the build: the Python package builds once, with the records applied.
driver::TuneNetworkOptions tuneOptionsFor(const TaskSource& source, driver::SearchKind search, const std::vector<driver::ListedTask>& asked,
                                          const std::string& log);

/// The callbacks of such a run: the tasks it lists again checked against `asked` (by number and
/// workload: a task object must tune what it printed), each trial forwarded (forwardTrials),
/// Ctrl-C honoured also before each task's round and after each confirmation's decision.
driver::TuneCallbacks tuneCallbacksFor(std::vector<driver::ListedTask> asked, std::function<void(const Trial&)> onTrial);

}  // namespace tessel::python
