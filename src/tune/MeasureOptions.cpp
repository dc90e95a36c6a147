#include "tune/MeasureOptions.h"

#include <algorithm>
#include <cmath>

#include "support/Error.h"

namespace tessel::tune {

namespace {
constexpr double kDaySeconds = 24 * 3600;
bool finiteIn(double v, double low, double high) { return std::isfinite(v) && v >= low && v <= high; }
/// TF32 keeps 10 of float32's 23 mantissa bits (NVIDIA, "TensorFloat-32 in the A100 GPU"), so
/// an operand rounded to nearest is off by at most 2^-11 of itself and a product of two by
/// about 2^-10 (1e-3); a sum of such products of one sign (the checks' inputs are in [0, 1))
/// keeps that bound. Four times it leaves room for the float32 accumulation and the epilogue.
constexpr double kTf32Tolerance = 4e-3;
}  // namespace

void MeasureOptions::validate(const std::string& who) const {
  TESSEL_CHECK(number >= 1 && number <= 1000000, "{}: number must be between 1 and 1000000, got {}", who, number);
  TESSEL_CHECK(repeat >= 1 && repeat <= 10000, "{}: repeat must be between 1 and 10000, got {}", who, repeat);
  TESSEL_CHECK(finiteIn(minRepeatMs, 0, 60000), "{}: min_repeat_ms must be between 0 and 60000 milliseconds, got {}", who,
               minRepeatMs);
  TESSEL_CHECK(finiteIn(timeoutSeconds, 1e-3, kDaySeconds), "{}: timeout must be between 0.001 s and a day, got {}", who,
               timeoutSeconds);
  TESSEL_CHECK(finiteIn(cooldownIntervalSeconds, 0, 3600), "{}: cooldown_interval must be between 0 and 3600 seconds, got {}",
               who, cooldownIntervalSeconds);
  TESSEL_CHECK(finiteIn(tolerance, 0, 1e30), "{}: tolerance must be a non-negative number, got {}", who, tolerance);
}

double MeasureOptions::toleranceFor(const target::Target& target) const {
  return target.matmulPrecision == target::MatmulPrecision::Tf32 ? std::max(tolerance, kTf32Tolerance) : tolerance;
}

std::chrono::milliseconds MeasureOptions::runDeadline() const {
  double measuring = (repeat + 3) * minRepeatMs / 1000.0 * 1.5;
  if (enableCpuCacheFlush) measuring += 0.2 * (repeat + 3);
  return std::chrono::milliseconds(int64_t(std::ceil((timeoutSeconds + measuring) * 1000)));
}

}  // namespace tessel::tune
