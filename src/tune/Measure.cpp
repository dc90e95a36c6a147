#include "tune/Measure.h"

#include <cmath>

#include "te/DagJson.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

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

double MeasureResult::cost() const {
  if (!ok() || costs.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> sorted = costs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

BuildResult buildErrorResult(MeasureErrorNo errorNo, std::string message, double buildSeconds) {
  BuildResult result;
  result.errorNo = errorNo;
  result.errorMessage = std::move(message);
  result.buildSeconds = buildSeconds;
  return result;
}

MeasureResult errorResult(MeasureErrorNo errorNo, std::string message) {
  MeasureResult result;
  result.errorNo = errorNo;
  result.errorMessage = std::move(message);
  result.timestamp = unixTimeSeconds();
  return result;
}

double stopAboveFor(double bestSeconds) {
  return std::isfinite(bestSeconds) && bestSeconds > 0 ? kStopAboveBestFactor * bestSeconds : 0;
}

double unixTimeSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace tessel::tune
