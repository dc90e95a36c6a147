#include "tune/PlausibleCost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tessel::tune {

double peakGflopsFor(const MeasureTask& task, double peakGflops) {
  int narrowest = 32;
  for (const auto& op : task.dag.ops())
    if (!op->dtype.isBool() && op->dtype.bits > 0) narrowest = std::min<int>(narrowest, op->dtype.bits);
  return peakGflops * (32.0 / narrowest);
}

std::string implausibleCosts(const MeasureResult& result, const MeasureTask& task, double peakGflops) {
  if (std::string impossible = impossibleCosts(result); !impossible.empty()) return impossible;
  if (!result.ok() || result.costs.empty() || !(peakGflops > 0)) return "";
  double fastest = *std::min_element(result.costs.begin(), result.costs.end());
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
  if (!why.empty()) refuseTiming(result, device, why);
}

}  // namespace tessel::tune
