#include "driver/NetworkTaskWeights.h"

namespace tessel::driver {

std::map<std::string, double> networkTaskWeights(const PreparedModel& prepared, TaskListOptions options) {
  std::map<std::string, double> weights;
  for (SearchKind search : {SearchKind::Templates, SearchKind::AutoScheduler}) {
    options.search = search;
    // A function's weight counts its occurrences; its tasks under either tuner (a template's own
    // compute, or the function's) are run as often.
    for (const ListedTask& task : listTuningTasks(prepared, options).tasks)
      weights[recordedWorkloadKey(task)] = double(task.function.weight);
  }
  return weights;
}

}  // namespace tessel::driver
