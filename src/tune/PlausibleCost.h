/// Measured costs that cannot be true, turned into errors before they reach a log: a cost under
/// the floor every record must clear (MeasureResult.h's kMinRecordCostSeconds; a log holding one would
/// be refused when read), and a rate over what the device can do at all, its reported FMA peak
/// times kPeakMargin. A device answering such timings is broken or lying (a rogue worker's
/// invented costs were once ranked first in a log): its result becomes a RuntimeDeviceError
/// that says why, recorded but never ranked.
#pragma once
#include <string>

#include "tune/Measure.h"

namespace tessel::tune {

/// How far a measured rate may exceed the device's peak before it cannot be true. The peak
/// already counts the turbo clock (or a ceiling above any); the margin covers work the task's
/// FLOP count counts and a kernel skips (padded taps under guards, both sides of a select).
inline constexpr double kPeakMargin = 2.0;

/// The most GFLOPS a kernel of `task` can reach on a device whose fp32 FMA peak is
/// `peakGflops`: narrower elements fill more of a vector (int8: 4x, as dot-product instructions
/// do that many multiply-adds per 32-bit lane); wider ones are not held to less.
double peakGflopsFor(const MeasureTask& task, double peakGflops);

/// Why `result`'s costs cannot have been measured for `task` on a device whose fp32 FMA peak is
/// `peakGflops` (0: unknown, only the floor is checked); empty when they can, or for an error.
std::string implausibleCosts(const MeasureResult& result, const MeasureTask& task, double peakGflops);

/// Makes a result whose costs cannot be true a RuntimeDeviceError saying why, naming `device`
/// ("the device server at 10.0.0.5:9090", "this machine").
void refuseImplausibleCosts(MeasureResult& result, const MeasureTask& task, double peakGflops, const std::string& device);

}  // namespace tessel::tune
