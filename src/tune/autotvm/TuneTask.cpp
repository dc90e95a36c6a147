#include "tune/autotvm/TuneTask.h"

#include "tune/Confirmation.h"
#include "tune/ProgressLine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "support/Clock.h"
#include "support/Error.h"

namespace tessel::tune::autotvm {

std::optional<MeasureInput> instantiateConfig(const TuningTask& task, const ConfigEntity& config, std::string* error) {
  try {
    return MeasureInput{task.measure, task.instantiate(config), config.toJson().dump()};
  } catch (const Error& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

void TuneTaskResult::accumulate(const TuneTaskResult& o) {
  trials += o.trials;
  errors += o.errors;
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
}  // namespace

void confirmTask(const TuningTask& task, Builder& builder, Runner& runner, const TuneTaskOptions& options,
             const std::vector<Trial>& measured, const TrialCallback& onTrial, TuneTaskResult& result) {
  // Its wall time counts in result.seconds, whichever way it returns.
  struct AddSeconds {
    double& to;
    Clock::time_point from = Clock::now();
    ~AddSeconds() { to += secondsSince(from); }
  } timed{result.seconds};
  // The best distinct configs by their search-time throughput, then the fallback.
  std::vector<SearchedCandidate> searched;
  for (const Trial& t : measured) searched.push_back({std::to_string(t.index), t.flopsPerSecond});
  std::vector<uint64_t> indices;
  for (size_t i : pickContenders(searched, std::to_string(task.fallbackIndex), options.confirmTop)) indices.push_back(measured[i].index);
  // No contender: the fallback, measured in the search, beat every candidate by more than
  // the slack; it stays at its search cost. (Nothing measured but failures: nothing to decide.)
  double fallbackFlops = 0;
  for (const Trial& t : measured)
    if (t.index == task.fallbackIndex) fallbackFlops = std::max(fallbackFlops, t.flopsPerSecond);
  const bool withoutRounds = indices.empty();
  if (withoutRounds && !(fallbackFlops > 0 && task.flops > 0)) return;
  indices.push_back(task.fallbackIndex);

  auto start = Clock::now();
  std::vector<MeasureInput> inputs;
  std::vector<uint64_t> instantiated;  // the configs of `inputs`
  for (uint64_t index : indices)
    if (auto input = instantiateConfig(task, task.space->get(index), nullptr)) {
      inputs.push_back(std::move(*input));
      instantiated.push_back(index);
    }
  result.instantiateSeconds += secondsSince(start);
  if (inputs.empty() || instantiated.back() != task.fallbackIndex) return;
  std::optional<Confirmation> c;
  int rounds = 0;
  if (withoutRounds) {
    c = keepFallbackWithoutRounds(task.flops / fallbackFlops);
  } else {
    // The fallback always instantiates; without a candidate there is nothing to compare.
    if (inputs.size() < 2) return;
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
          : fmt::format("config {} confirmed: {:.4f} ms against {}'s {:.4f} ms ({:.1f}% faster round by round) in {} "
                        "interleaved rounds",
                        decided, result.confirmedCost * 1e3, fallbackShort, result.fallbackCost * 1e3, 100 * (1 - c->winnerRatio),
                        options.confirmRounds);
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
  std::vector<Trial> measuredTrials = resumed;  // every measured config, for the confirmation
  for (const Trial& t : resumed) {
    tuner.markProposed(t.index);
    consider(t);
  }
  if (!resumed.empty()) tuner.update(resumed);

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
    // Configs that do not instantiate are errors without a build.
    auto instantiateStart = Clock::now();
    std::vector<MeasureInput> inputs;
    std::vector<size_t> measuredAt;
    std::vector<MeasureResult> results(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      std::string error;
      auto input = instantiateConfig(*task, space.get(indices[i]), &error);
      if (input) {
        measuredAt.push_back(i);
        input->stopAboveSeconds = result.bestFlopsPerSecond > 0 ? stopAboveFor(task->flops / result.bestFlopsPerSecond) : 0;
        inputs.push_back(std::move(*input));
      } else {
        results[i] = errorResult(MeasureErrorNo::InstantiationError, error);
      }
    }
    result.instantiateSeconds += secondsSince(instantiateStart);
    // Built, then (the machine checked while nothing of ours runs) run.
    auto buildStart = Clock::now();
    std::vector<BuildResult> builds = buildBatch(builder, runner, inputs);
    result.buildSeconds += secondsSince(buildStart);
    addBuildTimes(builds, result);
    bool loaded = !inputs.empty() && options.loadMonitor && options.loadMonitor->beforeRun(int(inputs.size()));
    auto runStart = Clock::now();
    std::vector<MeasureResult> measured = inputs.empty() ? std::vector<MeasureResult>{} : runner.run(inputs, builds);
    result.runSeconds += secondsSince(runStart);
    TESSEL_CHECK(measured.size() == inputs.size(), "tuning: the runner returned {} results for {} candidates", measured.size(),
                 inputs.size());
    for (const BuildResult& b : builds) builder.discard(b);
    for (MeasureResult& m : measured) {
      m.underLoad = m.underLoad || loaded;
      result.loadSeconds += m.loadSeconds;
    }
    for (size_t k = 0; k < measuredAt.size(); ++k) results[measuredAt[k]] = std::move(measured[k]);

    std::vector<Trial> trials;
    size_t next = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
      const MeasureResult& r = results[i];
      Trial t{indices[i], r.ok() && r.cost() > 0 ? task->flops / r.cost() : 0.0};
      measuredTrials.push_back(t);
      if (!r.ok()) ++result.errors;
      ++result.trials;
      if (onTrial) {
        bool instantiated = next < measuredAt.size() && measuredAt[next] == i;
        MeasureInput input = instantiated ? inputs[next++] : MeasureInput{task->measure, {}, space.get(indices[i]).toJson().dump()};
        onTrial(space.get(indices[i]), input, r);
      }
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
  if (options.confirmTop > 0 && result.trials > 0) confirmTask(*task, builder, runner, options, measuredTrials, onTrial, result);
  result.seconds = elapsed();
  printProgress(true);
  if (!result.confirmationSummary.empty() && !options.progressPrefix.empty() && options.progressTo) {
    std::fprintf(options.progressTo, "%s%s\n", options.progressPrefix.c_str(), result.confirmationSummary.c_str());
    std::fflush(options.progressTo);
  }
  return result;
}

}  // namespace tessel::tune::autotvm
