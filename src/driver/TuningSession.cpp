#include "driver/TuningSession.h"

namespace tessel::driver {

namespace {

/// Keeps `cost` as the task's best when it is lower (a failed trial's is +inf).
void considerBest(TunedTask& task, double cost, std::optional<uint64_t> config, const std::vector<schedule::StepPtr>& steps) {
  if (!(cost < task.bestCost)) return;
  task.bestCost = cost;
  task.bestConfig = config;
  task.bestSteps = steps;
}

}  // namespace

const char* taskSchedulerStrategy(TaskSchedulerKind kind) { return kind == TaskSchedulerKind::Gradient ? "gradient" : "round-robin"; }

void TuningSession::logTrial(size_t i, const tune::TuningRecord& record) {
  log.append(record);
  if (record.result.confirmed) return;
  TunedTask& task = outcomes[i];
  ++task.trials;
  if (!record.ok()) ++task.errors;
  std::optional<uint64_t> config;
  if (record.config) config = uint64_t(record.config->index);
  considerBest(task, record.cost(), config, record.steps);
  if (callbacks.onTrial) callbacks.onTrial({&tasks[i], task.trials, &record});
}

void TuningSession::resumedTrial(size_t i, double cost, std::optional<uint64_t> config, const std::vector<schedule::StepPtr>& steps) {
  ++outcomes[i].resumedTrials;
  considerBest(outcomes[i], cost, config, steps);
}

void TuningSession::taskStart(size_t i, int64_t trials) const {
  if (callbacks.onTaskStart) callbacks.onTaskStart(tasks[i], trials);
}

void TuningSession::taskFinish(size_t i) const {
  if (callbacks.onTaskFinish) callbacks.onTaskFinish(tasks[i], outcomes[i]);
}

void TuningSession::decide(size_t i, TaskDecision decision) {
  decision.number = tasks[i].number;
  decision.prefix = prefix(i);
  outcomes[i].decision = decision;
  if (callbacks.onDecision) callbacks.onDecision(decision);
}

void TuningSession::note(const std::string& line) const {
  if (callbacks.onNote) callbacks.onNote(line);
}

tune::TaskSchedulerOptions TuningSession::schedulerOptions(TaskSchedulerKind kind, const tune::RunEstimate& estimate) const {
  tune::TaskSchedulerOptions o;
  o.strategy = taskSchedulerStrategy(kind);
  o.seed = options.seed;
  o.runEstimate = &estimate;
  o.tableTo = options.tuneLinesTo;
  return o;
}

}  // namespace tessel::driver
