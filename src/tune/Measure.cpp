#include "tune/Measure.h"

#include <cmath>

#include "te/DagJson.h"

namespace tessel::tune {

MeasureTaskPtr makeMeasureTask(std::string name, te::ComputeDAG dag, target::Target target) {
  auto task = std::make_shared<MeasureTask>();
  task->name = std::move(name);
  task->workloadKey = dag.workloadKey();
  task->dagJson = std::make_shared<const std::string>(te::dagToJson(dag).dump());
  task->dag = std::move(dag);
  task->target = std::move(target);
  return task;
}

BuildResult buildErrorResult(MeasureErrorNo errorNo, std::string message, double buildSeconds) {
  BuildResult result;
  result.errorNo = errorNo;
  result.errorMessage = std::move(message);
  result.buildSeconds = buildSeconds;
  return result;
}

double stopAboveFor(double bestSeconds) {
  return std::isfinite(bestSeconds) && bestSeconds > 0 ? kStopAboveBestFactor * bestSeconds : 0;
}

}  // namespace tessel::tune
