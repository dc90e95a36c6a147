#include "tune/autotvm/TuneTask.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

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

TuneTaskResult tuneTask(const TuningTaskPtr& task, Tuner& tuner, Builder& builder, Runner& runner,
                        const TuneTaskOptions& options, const std::vector<Trial>& resumed, const TrialCallback& onTrial) {
  TESSEL_CHECK(options.nTrial >= 0, "tuning: n_trial must not be negative, got {}", options.nTrial);
  TESSEL_CHECK(options.batchSize >= 1, "tuning: the batch size must be at least 1");
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const ConfigSpace& space = *task->space;
  int64_t budget = int64_t(std::min<uint64_t>(uint64_t(options.nTrial), space.size()));

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
  for (const Trial& t : resumed) {
    tuner.markProposed(t.index);
    consider(t);
  }
  if (!resumed.empty()) tuner.update(resumed);

  auto printProgress = [&](bool final) {
    if (options.progressPrefix.empty() || !options.progressTo) return;
    if (!final && !options.liveProgress) return;
    std::fprintf(options.progressTo, "%s%s Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%lld/%lld) | %.2f s%s",
                 options.liveProgress ? "\r" : "", options.progressPrefix.c_str(), current / 1e9,
                 result.bestFlopsPerSecond / 1e9, static_cast<long long>(done), static_cast<long long>(budget), elapsed(),
                 final ? " Done.\n" : "");
    std::fflush(options.progressTo);
  };
  printProgress(false);

  while (done < budget && tuner.hasNext()) {
    if (options.earlyStopping > 0 && done - bestAt >= options.earlyStopping && result.bestIndex) {
      result.stoppedEarly = true;
      break;
    }
    std::vector<uint64_t> indices;
    // The fallback config (the default schedule) goes first: the best a run reports is then
    // never worse than the untuned build, however few trials it had.
    if (options.measureFallbackFirst && !tuner.wasProposed(task->fallbackIndex)) {
      tuner.markProposed(task->fallbackIndex);
      indices.push_back(task->fallbackIndex);
    }
    for (uint64_t i : tuner.nextBatch(std::min<size_t>(options.batchSize, size_t(budget - done)) - indices.size()))
      indices.push_back(i);
    if (indices.empty()) break;
    // Configs that do not instantiate are errors without a build.
    std::vector<MeasureInput> inputs;
    std::vector<size_t> measuredAt;
    std::vector<MeasureResult> results(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      std::string error;
      auto input = instantiateConfig(*task, space.get(indices[i]), &error);
      if (input) {
        measuredAt.push_back(i);
        inputs.push_back(std::move(*input));
      } else {
        results[i] = errorResult(MeasureErrorNo::InstantiationError, error);
      }
    }
    auto measured = measureBatch(builder, runner, inputs);
    for (size_t k = 0; k < measuredAt.size(); ++k) results[measuredAt[k]] = std::move(measured[k]);

    std::vector<Trial> trials;
    size_t next = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
      const MeasureResult& r = results[i];
      Trial t{indices[i], r.ok() && r.meanCost() > 0 ? task->flops / r.meanCost() : 0.0};
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
    tuner.update(trials);
    printProgress(false);
  }
  result.seconds = elapsed();
  printProgress(true);
  return result;
}

}  // namespace tessel::tune::autotvm
