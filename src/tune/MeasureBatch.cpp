#include "tune/MeasureBatch.h"

#include <chrono>
#include <set>

#include "support/Error.h"

namespace tessel::tune {

std::vector<BuildResult> buildBatch(Builder& builder, Runner& runner, const std::vector<MeasureInput>& inputs) {
  // The references of tasks seen for the first time travel with the candidates.
  std::vector<MeasureInput> toBuild = inputs;
  std::vector<MeasureTaskPtr> referenceTasks;
  std::set<std::string> seen;
  for (const auto& input : inputs) {
    TESSEL_CHECK(input.task != nullptr, "measureBatch: a candidate has no task");
    if (runner.needsReference(*input.task) && seen.insert(input.task->key()).second) {
      referenceTasks.push_back(input.task);
      MeasureInput reference{input.task, {}, "reference (naive schedule)"};
      reference.reference = true;
      toBuild.push_back(reference);
    }
  }
  std::vector<BuildResult> builds = builder.build(toBuild);
  TESSEL_CHECK(builds.size() == toBuild.size(), "measureBatch: the builder returned {} results for {} inputs",
               builds.size(), toBuild.size());
  for (size_t r = 0; r < referenceTasks.size(); ++r) {
    const BuildResult& reference = builds[inputs.size() + r];
    runner.setReference(*referenceTasks[r], reference);
    builder.discard(reference);
  }
  builds.resize(inputs.size());
  return builds;
}

std::vector<MeasureResult> measureBatch(Builder& builder, Runner& runner, const std::vector<MeasureInput>& inputs,
                                        BatchTiming* timing) {
  auto start = std::chrono::steady_clock::now();
  std::vector<BuildResult> builds = buildBatch(builder, runner, inputs);
  auto built = std::chrono::steady_clock::now();
  std::vector<MeasureResult> results = runner.run(inputs, builds);
  TESSEL_CHECK(results.size() == inputs.size(), "measureBatch: the runner returned {} results for {} inputs",
               results.size(), inputs.size());
  for (const auto& build : builds) builder.discard(build);
  if (timing) {
    timing->buildSeconds += std::chrono::duration<double>(built - start).count();
    timing->runSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - built).count();
  }
  return results;
}

}  // namespace tessel::tune
