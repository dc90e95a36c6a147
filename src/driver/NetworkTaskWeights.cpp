#include "driver/NetworkTaskWeights.h"

#include "driver/TuningTasks.h"
#include "graph/GpuTargetLimits.h"
#include "support/Error.h"

namespace tessel::driver {

std::map<std::string, double> networkTaskWeights(const PreparedModel& prepared, const target::Target& target) {
  TESSEL_CHECK(target.isCpu() || target.isGpu(), "target '{}': task weights are of CPU and GPU targets' tasks", target.str());
  TaskListOptions options;
  options.target = target;
  // A GPU template's space (and so its task) is listed for limits; its workload key is its compute's.
  if (target.isGpu()) options.gpuLimits = graph::gpuLimitsForBuild(target);
  std::map<std::string, double> weights;
  for (SearchKind search : {SearchKind::Templates, SearchKind::AutoScheduler}) {
    options.search = search;
    // A function's weight counts its occurrences; its task under either tuner (a template's own
    // compute, or the function's) runs as often.
    for (const ListedTask& task : listTuningTasks(prepared, options).tasks)
      weights[recordedWorkloadKey(task)] = double(task.function.weight);
  }
  return weights;
}

}  // namespace tessel::driver
