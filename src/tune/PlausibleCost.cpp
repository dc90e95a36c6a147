#include "tune/PlausibleCost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tune/Record.h"

namespace tessel::tune {

double peakGflopsFor(const MeasureTask& task, double peakGflops) {
  int narrowest = 32;
  for (const auto& op : task.dag.ops())
    if (!op->dtype.isBool() && op->dtype.bits > 0) narrowest = std::min<int>(narrowest, op->dtype.bits);
  return peakGflops * (32.0 / narrowest);
}

std::string implausibleCosts(const MeasureResult& result, const MeasureTask& task, double peakGflops) {
  if (!result.ok() || result.costs.empty()) return "";
  for (double cost : result.costs)
    if (!std::isfinite(cost) || cost < 0)
      return fmt::format("a cost of {} s is no measurement", cost);
  double fastest = *std::min_element(result.costs.begin(), result.costs.end());
  if (fastest < kMinRecordCostSeconds)
    return fmt::format("a cost of {:.3g} s per call is less than any kernel call takes ({:g} s)", fastest,
                       kMinRecordCostSeconds);
  if (!(peakGflops > 0)) return "";
  double flops = task.dag.flopCount();
  double rate = flops / fastest / 1e9, limit = kPeakMargin * peakGflopsFor(task, peakGflops);
  if (rate > limit)
    return fmt::format("a cost of {:.3g} s per call is {:.0f} GFLOPS for the {:.0f} FLOPs of task '{}', over {}x the "
                       "device's peak of {:.0f} GFLOPS for its element type",
                       fastest, rate, flops, task.name, kPeakMargin, limit / kPeakMargin);
  return "";
}

void refuseImplausibleCosts(MeasureResult& result, const MeasureTask& task, double peakGflops, const std::string& device) {
  std::string why = implausibleCosts(result, task, peakGflops);
  if (why.empty()) return;
  result.errorNo = MeasureErrorNo::RuntimeDeviceError;
  result.errorMessage = fmt::format("implausible timing from {}: {}; its device or measurement worker is broken or "
                                    "not honest, so the candidate is not ranked",
                                    device, why);
  result.costs.clear();
}

}  // namespace tessel::tune
