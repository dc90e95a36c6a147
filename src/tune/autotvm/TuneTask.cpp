#include "tune/autotvm/TuneTask.h"

#include "tune/Confirmation.h"
#include "tune/ProgressLine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "support/Clock.h"
#include "support/Error.h"
#include "tune/RecordQueries.h"

namespace tessel::tune::autotvm {

std::optional<MeasureInput> instantiateConfig(const TuningTask& task, const ConfigEntity& config, std::string* error) {
  try {
    return MeasureInput{task.measure, task.instantiate(config), config.toJson().dump()};
  } catch (const Error& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

std::string duplicatesLine(int64_t duplicates) {
  return fmt::format("{} duplicate{} of measured schedules not measured again", duplicates, duplicates == 1 ? "" : "s");
}

void TuneTaskResult::accumulate(const TuneTaskResult& o) {
  trials += o.trials;
  errors += o.errors;
  duplicates += o.duplicates;
  seconds += o.seconds;
  tunerSeconds += o.tunerSeconds;
  instantiateSeconds += o.instantiateSeconds;
  buildSeconds += o.buildSeconds;
  runSeconds += o.runSeconds;
  lowerCpuSeconds += o.lowerCpuSeconds;
  compileCpuSeconds += o.compileCpuSeconds;
  linkCpuSeconds += o.linkCpuSeconds;
  loadSeconds += o.loadSeconds;
}

namespace {

using Clock = std::chrono::steady_clock;

void addBuildTimes(const std::vector<BuildResult>& builds, TuneTaskResult& result) {
  for (const BuildResult& b : builds) {
    result.lowerCpuSeconds += b.lowerSeconds;
    result.compileCpuSeconds += b.compileSeconds;
    result.linkCpuSeconds += b.linkSeconds;
  }
}

/// A schedule measured in this run or resumed from the log: the first config that had its steps.
struct MeasuredSchedule {
  uint64_t index = 0;
  MeasureResult result;
};

/// The result of a resumed trial, as far as its Trial tells it (its median cost, or that it
/// failed): what a copy of it carries.
MeasureResult resumedResult(const TuningTask& task, const Trial& t) {
  if (t.flopsPerSecond > 0 && task.flops > 0) {
    MeasureResult r;
    r.costs = {task.flops / t.flopsPerSecond};
    r.timestamp = unixTimeSeconds();
    return r;
  }
  return errorResult(MeasureErrorNo::UnknownError, fmt::format("config {} has the same steps and failed (a resumed record)", t.index));
}

/// The result of a config whose steps `original` has: its costs or its error, not measured again.
MeasureResult copyOf(const MeasuredSchedule& original) {
  MeasureResult r = original.result;
  r.sameAs = int64_t(original.index);
  r.buildSeconds = r.runSeconds = r.loadSeconds = r.allCost = 0;  // it cost nothing
  r.timestamp = unixTimeSeconds();
  return r;
}
}  // namespace

void confirmTask(const TuningTask& task, Builder& builder, Runner& runner, const TuneTaskOptions& options,
             const std::vector<Trial>& measured, const TrialCallback& onTrial, TuneTaskResult& result) {
  // Its wall time counts in result.seconds, whichever way it returns.
  struct AddSeconds {
    double& to;
    Clock::time_point from = Clock::now();
    ~AddSeconds() { to += secondsSince(from); }
  } timed{result.seconds};
  // The fastest configs of distinct schedules by their search-time throughput, then the
  // fallback: configs with the same steps (a copy, TuneTaskResult::duplicates) are one contender,
  // and one with the fallback's steps is the fallback.
  std::vector<SearchedCandidate> searched;
  for (const Trial& t : measured) searched.push_back({std::to_string(t.index), t.flopsPerSecond});
  std::vector<size_t> ranked = pickContenders(searched, std::to_string(task.fallbackIndex), std::numeric_limits<int>::max());
  double fallbackFlops = 0;
  for (const Trial& t : measured)
    if (t.index == task.fallbackIndex) fallbackFlops = std::max(fallbackFlops, t.flopsPerSecond);

  auto start = Clock::now();
  std::vector<MeasureInput> inputs;
  std::vector<uint64_t> instantiated;  // the configs of `inputs`
  std::optional<MeasureInput> fallbackInput = instantiateConfig(task, task.space->get(task.fallbackIndex), nullptr);
  if (fallbackInput) {
    std::set<std::string> schedules{candidateKey(fallbackInput->steps)};
    for (size_t i : ranked) {
      if (int(inputs.size()) >= options.confirmTop) break;
      uint64_t index = measured[i].index;
      auto input = instantiateConfig(task, task.space->get(index), nullptr);
      if (!input || !schedules.insert(candidateKey(input->steps)).second) continue;
      inputs.push_back(std::move(*input));
      instantiated.push_back(index);
    }
    inputs.push_back(std::move(*fallbackInput));
    instantiated.push_back(task.fallbackIndex);
  }
  result.instantiateSeconds += secondsSince(start);
  // No contender: the fallback, measured in the search, beat every other schedule by more than
  // the slack; it stays at its search cost. (Nothing measured but failures: nothing to decide.)
  if (inputs.empty()) return;  // the fallback always instantiates
  const bool withoutRounds = inputs.size() == 1;
  if (withoutRounds && !(fallbackFlops > 0 && task.flops > 0)) return;
  std::optional<Confirmation> c;
  int rounds = 0;
  if (withoutRounds) {
    c = keepFallbackWithoutRounds(task.flops / fallbackFlops);
  } else {
    ConfirmOptions o{options.confirmRounds, options.confirmMargin, options.seed ^ (task.fallbackIndex * 0x9e3779b97f4a7c15ULL),
                     options.loadMonitor};
    c = confirmAgainstFallback(inputs, builder, runner, o);
    if (!c) return;  // even the fallback failed every round: nothing to decide
    rounds = options.confirmRounds;
  }
  result.buildSeconds += c->buildSeconds;
  result.runSeconds += c->runSeconds;
  result.lowerCpuSeconds += c->lowerCpuSeconds;
  result.compileCpuSeconds += c->compileCpuSeconds;
  result.linkCpuSeconds += c->linkCpuSeconds;
  result.loadSeconds += c->loadSeconds;

  uint64_t decided = instantiated[c->winner];
  result.confirmedIndex = decided;
  result.keptFallback = c->keptFallback;
  result.withoutRounds = withoutRounds;
  result.confirmedCost = c->winnerCost;
  result.fallbackCost = c->fallbackCost;
  const char* fallback = task.fallbackIsDefaultSchedule ? "the default schedule" : "the template's fallback config";
  const char* fallbackShort = task.fallbackIsDefaultSchedule ? "the default" : "the fallback";
  result.confirmationSummary =
      withoutRounds
          ? fmt::format("no candidate came within {}x of {}: {} stays ({:.4f} ms)", kContenderSlack, fallback, fallbackShort,
                        result.confirmedCost * 1e3)
      : result.keptFallback
          ? fmt::format("no candidate beat {} in {} interleaved rounds: {} stays ({:.4f} ms)", fallback, options.confirmRounds,
                        fallbackShort, result.confirmedCost * 1e3)
          : c->confirmedLine(fmt::format("config {}", decided), fallbackShort, options.confirmRounds);
  if (onTrial) {
    nlohmann::json candidates = nlohmann::json::array();
    for (size_t k = 0; k < c->ratios.size(); ++k)
      candidates.push_back({{"index", instantiated[k]},
                            {"ratio_to_fallback", std::isfinite(c->ratios[k]) ? nlohmann::json(c->ratios[k]) : nlohmann::json(nullptr)}});
    nlohmann::json details = {{"fallback_index", task.fallbackIndex}, {"candidates", candidates}};
    onTrial(task.space->get(decided), inputs[c->winner], c->decision(std::move(details), rounds));
  }
}

int64_t plannedTrials(const TuningTask& task, int64_t nTrial, size_t resumed) {
  return std::max<int64_t>(0, int64_t(std::min<uint64_t>(uint64_t(std::max<int64_t>(nTrial, 0)), task.space->size())) - int64_t(resumed));
}

TuneTaskResult tuneTask(const TuningTaskPtr& task, Tuner& tuner, Builder& builder, Runner& runner,
                        const TuneTaskOptions& options, const std::vector<Trial>& resumed, const TrialCallback& onTrial) {
  TESSEL_CHECK(options.nTrial >= 0, "tuning: n_trial must not be negative, got {}", options.nTrial);
  TESSEL_CHECK(options.batchSize >= 1, "tuning: the batch size must be at least 1");
  TESSEL_CHECK(options.confirmTop >= 0 && options.confirmRounds >= 1, "tuning: confirm_top must not be negative and confirm_rounds must be at least 1");
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const ConfigSpace& space = *task->space;
  int64_t budget = plannedTrials(*task, options.nTrial, 0);

  TuneTaskResult result;
  int64_t done = 0, bestAt = 0;
  double current = 0;
  auto consider = [&](const Trial& t) {
    ++done;
    current = t.flopsPerSecond;
    if (t.flopsPerSecond > result.bestFlopsPerSecond) {
      result.bestFlopsPerSecond = t.flopsPerSecond;
      result.bestIndex = t.index;
      bestAt = done;
    }
  };
  std::vector<Trial> measuredTrials = resumed;  // every trial, for the confirmation (which tells copies apart)
  for (const Trial& t : resumed) {
    tuner.markProposed(t.index);
    consider(t);
  }
  if (!resumed.empty()) tuner.update(resumed);
  // Configs with the same steps are one schedule: measured once, by the first of them (configs
  // differing only in a knob the schedule ignores where the rules decide anyway). Keyed by the
  // steps of today's instantiation, as every proposal is.
  std::unordered_map<std::string, MeasuredSchedule> measuredSchedules;
  auto resumedStart = Clock::now();
  for (const Trial& t : resumed)
    if (auto input = instantiateConfig(*task, space.get(t.index), nullptr))
      measuredSchedules.try_emplace(candidateKey(input->steps), MeasuredSchedule{t.index, resumedResult(*task, t)});
  result.instantiateSeconds += secondsSince(resumedStart);

  auto printProgress = [&](bool final) {
    printProgressLine({options.progressPrefix, options.progressTo, options.liveProgress, options.runEstimate}, final, current,
                      result.bestFlopsPerSecond, done, budget, elapsed());
  };
  printProgress(false);

  while (done < budget && tuner.hasNext()) {
    if (options.earlyStopping > 0 && done - bestAt >= options.earlyStopping && result.bestIndex) {
      result.stoppedEarly = true;
      break;
    }
    auto chooseStart = Clock::now();
    std::vector<uint64_t> indices;
    // The fallback config (the default schedule) goes first: the best a run reports is then
    // never worse than the untuned build, however few trials it had.
    if (options.measureFallbackFirst && !tuner.wasProposed(task->fallbackIndex)) {
      tuner.markProposed(task->fallbackIndex);
      indices.push_back(task->fallbackIndex);
    }
    for (uint64_t i : tuner.nextBatch(std::min<size_t>(options.batchSize, size_t(budget - done)) - indices.size()))
      indices.push_back(i);
    result.tunerSeconds += secondsSince(chooseStart);
    if (indices.empty()) break;
    // Configs that do not instantiate are errors without a build; a config whose steps were
    // measured before (or are measured in this batch) takes that result without a build.
    auto instantiateStart = Clock::now();
    std::vector<MeasureInput> inputs;        // every proposal's (no steps: it did not instantiate)
    std::vector<std::string> keys(indices.size());
    std::vector<MeasureResult> results(indices.size());
    std::vector<size_t> measuredAt;          // the proposals built and run
    std::map<size_t, size_t> sameInBatch;    // a proposal -> the earlier one of this batch with its steps
    std::unordered_map<std::string, size_t> batchKeys;
    for (size_t i = 0; i < indices.size(); ++i) {
      std::string error;
      auto input = instantiateConfig(*task, space.get(indices[i]), &error);
      if (!input) {
        results[i] = errorResult(MeasureErrorNo::InstantiationError, error);
        inputs.push_back(MeasureInput{task->measure, {}, space.get(indices[i]).toJson().dump()});
        continue;
      }
      keys[i] = candidateKey(input->steps);
      if (auto it = measuredSchedules.find(keys[i]); it != measuredSchedules.end()) {
        results[i] = copyOf(it->second);
      } else if (auto [at, fresh] = batchKeys.try_emplace(keys[i], i); !fresh) {
        sameInBatch[i] = at->second;
      } else {
        measuredAt.push_back(i);
        input->stopAboveSeconds = result.bestFlopsPerSecond > 0 ? stopAboveFor(task->flops / result.bestFlopsPerSecond) : 0;
      }
      inputs.push_back(std::move(*input));
    }
    std::vector<MeasureInput> toMeasure;
    for (size_t i : measuredAt) toMeasure.push_back(inputs[i]);
    result.instantiateSeconds += secondsSince(instantiateStart);
    // Built, then (the machine checked while nothing of ours runs) run.
    auto buildStart = Clock::now();
    std::vector<BuildResult> builds = buildBatch(builder, runner, toMeasure);
    result.buildSeconds += secondsSince(buildStart);
    addBuildTimes(builds, result);
    bool loaded = !toMeasure.empty() && options.loadMonitor && options.loadMonitor->beforeRun(int(toMeasure.size()));
    auto runStart = Clock::now();
    std::vector<MeasureResult> measured = toMeasure.empty() ? std::vector<MeasureResult>{} : runner.run(toMeasure, builds);
    result.runSeconds += secondsSince(runStart);
    TESSEL_CHECK(measured.size() == toMeasure.size(), "tuning: the runner returned {} results for {} candidates", measured.size(),
                 toMeasure.size());
    for (const BuildResult& b : builds) builder.discard(b);
    for (MeasureResult& m : measured) {
      m.underLoad = m.underLoad || loaded;
      result.loadSeconds += m.loadSeconds;
    }
    for (size_t k = 0; k < measuredAt.size(); ++k) {
      size_t i = measuredAt[k];
      results[i] = std::move(measured[k]);
      measuredSchedules.try_emplace(keys[i], MeasuredSchedule{indices[i], results[i]});
    }
    for (const auto& [i, original] : sameInBatch) results[i] = copyOf(measuredSchedules.at(keys[original]));

    // Every proposal is a trial: logged, counted against the budget and taught to the tuner, a
    // copy with its original's result (so a space full of copies still ends the search).
    std::vector<Trial> trials;
    for (size_t i = 0; i < indices.size(); ++i) {
      const MeasureResult& r = results[i];
      Trial t{indices[i], r.ok() && r.cost() > 0 ? task->flops / r.cost() : 0.0};
      measuredTrials.push_back(t);
      if (!r.ok()) ++result.errors;
      if (r.sameAs) ++result.duplicates;
      ++result.trials;
      if (onTrial) onTrial(space.get(indices[i]), inputs[i], r);
      consider(t);
      trials.push_back(t);
    }
    auto learnStart = Clock::now();
    tuner.update(trials);
    result.tunerSeconds += secondsSince(learnStart);
    if (options.runEstimate) options.runEstimate->measured(int64_t(trials.size()));
    printProgress(false);
  }
  // The decision is re-measured when this run measured something new (a resumed run that
  // only reads its log keeps the decision the log holds).
  if (options.confirmTop > 0 && result.trials > result.duplicates)
    confirmTask(*task, builder, runner, options, measuredTrials, onTrial, result);
  result.seconds = elapsed();
  printProgress(true);
  // The task's closing lines, under its progress prefix.
  auto printLine = [&](const std::string& line) {
    if (line.empty() || options.progressPrefix.empty() || !options.progressTo) return;
    std::fprintf(options.progressTo, "%s%s\n", options.progressPrefix.c_str(), line.c_str());
    std::fflush(options.progressTo);
  };
  if (result.duplicates > 0) printLine(duplicatesLine(result.duplicates));
  printLine(result.confirmationSummary);
  return result;
}

}  // namespace tessel::tune::autotvm
