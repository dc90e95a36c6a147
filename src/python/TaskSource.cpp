#include "python/TaskSource.h"

#include "python/Interrupts.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "tune/MeasureErrorNo.h"

namespace tessel::python {

std::shared_ptr<const TaskSource> makeTaskSource(const Model& model, const std::string& target, driver::SearchKind search) {
  auto source = std::make_shared<TaskSource>();
  source->model = model;
  source->prepare.target = target::Target::parse(target);
  TESSEL_CHECK(source->prepare.target.isCpu(), "target '{}': the Python package tunes CPU targets so far", target);
  source->prepare.desiredLayout = driver::defaultDesiredLayout(source->prepare.target);
  source->prepared = driver::prepareModel(model.graph, source->prepare);
  driver::TaskListOptions options;
  options.search = search;
  options.target = source->prepare.target;
  source->list = driver::listTuningTasks(source->prepared, options);
  return source;
}

Trial trialOf(const driver::TrialReport& report) {
  const tune::TuningRecord& r = *report.record;
  Trial t;
  t.task = report.task->number;
  t.trial = report.trial;
  if (r.config) {
    t.configIndex = r.config->index;
    t.config = r.config->entity.dump();
  }
  t.steps = schedule::printSteps(r.steps);
  t.costs = r.result.costs;
  t.errorNo = int(r.result.errorNo);
  t.errorName = tune::measureErrorName(r.result.errorNo);
  t.errorMessage = r.result.errorMessage;
  t.allCost = r.result.allCost;
  t.timestamp = r.result.timestamp;
  return t;
}

std::function<void(const driver::TrialReport&)> forwardTrials(std::function<void(const Trial&)> onTrial) {
  return [onTrial = std::move(onTrial)](const driver::TrialReport& report) {
    Trial trial = trialOf(report);
    if (onTrial) {
      pybind11::gil_scoped_acquire gil;
      onTrial(trial);
    }
    checkInterruptsWithoutGil();
  };
}

driver::TuneNetworkOptions tuneOptionsFor(const TaskSource& source, driver::SearchKind search, const std::vector<driver::ListedTask>& asked,
                                          const std::string& log) {
  driver::TuneNetworkOptions o;
  o.model = source.model.graph;
  o.prepare = source.prepare;
  o.search = search;
  for (const driver::ListedTask& t : asked) o.tasks.push_back(t.number);
  o.log = log;
  o.buildModule = false;
  o.evaluate = false;
  return o;
}

driver::TuneCallbacks tuneCallbacksFor(std::vector<driver::ListedTask> asked, std::function<void(const Trial&)> onTrial) {
  driver::TuneCallbacks callbacks;
  callbacks.onTasks = [asked = std::move(asked)](const driver::TaskList&, const std::vector<driver::ListedTask>& selected) {
    TESSEL_CHECK(selected.size() == asked.size(), "this run lists {} of the {} tasks asked for", selected.size(), asked.size());
    for (size_t i = 0; i < asked.size(); ++i)
      TESSEL_CHECK(selected[i].number == asked[i].number && selected[i].function.workloadKey == asked[i].function.workloadKey,
                   "task {} ({}) is not the task of that number in this run's list", asked[i].number, asked[i].function.name);
  };
  callbacks.onTrial = forwardTrials(std::move(onTrial));
  // The other safe points: before a task's round (its search not begun) and after a decision is
  // logged. The confirmations' re-measurements report no trials, so without these Ctrl-C would
  // wait for all of them.
  callbacks.onTaskStart = [](const driver::ListedTask&, int64_t) { checkInterruptsWithoutGil(); };
  callbacks.onDecision = [](const driver::TaskDecision&) { checkInterruptsWithoutGil(); };
  return callbacks;
}

}  // namespace tessel::python
