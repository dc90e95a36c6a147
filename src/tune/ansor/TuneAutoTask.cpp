#include "tune/ansor/TuneAutoTask.h"

#include "tune/ProgressLine.h"

#include <algorithm>
#include <chrono>

#include "support/Clock.h"
#include "support/Error.h"
#include "tune/Confirmation.h"
#include "tune/ansor/SketchPolicy.h"

namespace tessel::tune::ansor {

namespace {

using Clock = std::chrono::steady_clock;
}  // namespace

TuneAutoResult tuneAutoTask(const MeasureTaskPtr& task, double flops, SearchPolicy& policy, Builder& builder, Runner& runner,
                            const TuneAutoOptions& options, const std::vector<MeasuredSchedule>& resumed,
                            const ScheduleTrialCallback& onTrial) {
  TESSEL_CHECK(options.nTrial >= 0, "tuning {}: n_trial must not be negative, got {}", task->name, options.nTrial);
  TESSEL_CHECK(options.batchSize >= 1, "tuning {}: the batch size must be at least 1", task->name);
  auto start = Clock::now();
  TuneAutoResult result;
  int64_t done = 0, bestAt = 0;
  double current = 0;
  auto consider = [&](const MeasuredSchedule& m) {
    ++done;
    current = m.flopsPerSecond;
    if (m.flopsPerSecond > result.bestFlopsPerSecond) {
      result.bestFlopsPerSecond = m.flopsPerSecond;
      result.bestSteps = m.steps;
      bestAt = done;
    }
  };
  for (const MeasuredSchedule& m : resumed) consider(m);
  if (!resumed.empty()) {
    auto learnStart = Clock::now();
    policy.update(resumed);
    result.policySeconds += secondsSince(learnStart);
  }
  auto printProgress = [&](bool final) {
    printProgressLine({options.progressPrefix, options.progressTo, options.liveProgress, options.runEstimate}, final, current,
                      result.bestFlopsPerSecond, done, options.nTrial, secondsSince(start));
  };
  printProgress(false);

  while (done < options.nTrial) {
    if (options.earlyStopping > 0 && done - bestAt >= options.earlyStopping && !result.bestSteps.empty()) {
      result.stoppedEarly = true;
      break;
    }
    auto chooseStart = Clock::now();
    size_t wanted = std::min<size_t>(options.batchSize, size_t(options.nTrial - done));
    std::vector<std::vector<schedule::StepPtr>> batch;
    if (!options.measureFirst.empty() && result.trials == 0) {
      // Alone in the first batch: its cost then bounds how long the next batches' far slower
      // candidates are timed (MeasureInput::stopAboveSeconds).
      batch.push_back(options.measureFirst);
      wanted = 0;
    }
    if (wanted > 0)
      for (auto& steps : policy.nextBatch(wanted)) batch.push_back(std::move(steps));
    result.policySeconds += secondsSince(chooseStart);
    if (batch.empty()) break;  // the search found nothing new
    std::vector<MeasureInput> inputs;
    double bestSeconds = options.bestSecondsBefore;
    if (result.bestFlopsPerSecond > 0 && (bestSeconds <= 0 || flops / result.bestFlopsPerSecond < bestSeconds))
      bestSeconds = flops / result.bestFlopsPerSecond;
    for (auto& steps : batch) {
      inputs.push_back(MeasureInput{task, steps, ""});
      inputs.back().stopAboveSeconds = stopAboveFor(bestSeconds);
    }
    auto buildStart = Clock::now();
    std::vector<BuildResult> builds = buildBatch(builder, runner, inputs);
    result.buildSeconds += secondsSince(buildStart);
    bool loaded = options.loadMonitor && options.loadMonitor->beforeRun(int(inputs.size()));
    auto runStart = Clock::now();
    std::vector<MeasureResult> measured = runner.run(inputs, builds);
    result.runSeconds += secondsSince(runStart);
    TESSEL_CHECK(measured.size() == inputs.size(), "tuning {}: the runner returned {} results for {} candidates", task->name,
                 measured.size(), inputs.size());
    for (const BuildResult& b : builds) builder.discard(b);

    std::vector<MeasuredSchedule> trials;
    for (size_t i = 0; i < inputs.size(); ++i) {
      MeasureResult& r = measured[i];
      r.underLoad = r.underLoad || loaded;
      MeasuredSchedule m{inputs[i].steps, r.ok() && r.cost() > 0 ? flops / r.cost() : 0.0};
      if (!r.ok()) ++result.errors;
      ++result.trials;
      if (onTrial) onTrial(inputs[i], r);  // logged before the policy learns of it
      consider(m);
      trials.push_back(std::move(m));
    }
    auto learnStart = Clock::now();
    policy.update(trials);
    result.policySeconds += secondsSince(learnStart);
    if (options.runEstimate) options.runEstimate->measured(int64_t(trials.size()));
    printProgress(false);
  }
  result.seconds = secondsSince(start);
  printProgress(true);
  return result;
}

std::vector<MeasureInput> contendersAgainstDefault(const MeasureTaskPtr& task, const std::vector<MeasuredSchedule>& measured,
                                                   const std::vector<schedule::StepPtr>& defaultSteps, int top) {
  std::vector<SearchedCandidate> searched;
  for (const auto& m : measured) searched.push_back({scheduleKey(m.steps), m.flopsPerSecond});
  std::vector<MeasureInput> inputs;
  for (size_t i : pickContenders(searched, scheduleKey(defaultSteps), top)) inputs.push_back({task, measured[i].steps, ""});
  if (!inputs.empty()) inputs.push_back({task, defaultSteps, ""});
  return inputs;
}

}  // namespace tessel::tune::ansor
