#include "tune/MeasureResult.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace tessel::tune {

double MeasureResult::cost() const {
  if (!ok() || costs.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> sorted = costs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

MeasureResult errorResult(MeasureErrorNo errorNo, std::string message) {
  MeasureResult result;
  result.errorNo = errorNo;
  result.errorMessage = std::move(message);
  result.timestamp = unixTimeSeconds();
  return result;
}

double unixTimeSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string impossibleCosts(const MeasureResult& result) {
  if (!result.ok() || result.costs.empty()) return "";
  for (double cost : result.costs)
    if (!std::isfinite(cost) || cost < 0) return fmt::format("a cost of {} s is no measurement", cost);
  double fastest = *std::min_element(result.costs.begin(), result.costs.end());
  if (fastest < kMinRecordCostSeconds)
    return fmt::format("a cost of {:.3g} s per call is less than any kernel call takes ({:g} s)", fastest,
                       kMinRecordCostSeconds);
  return "";
}

void refuseTiming(MeasureResult& result, const std::string& device, const std::string& why) {
  result.errorNo = MeasureErrorNo::RuntimeDeviceError;
  result.errorMessage = fmt::format("implausible timing from {}: {}; its device or measurement worker is broken or "
                                    "not honest, so the candidate is not ranked",
                                    device, why);
  result.costs.clear();
}

}  // namespace tessel::tune
