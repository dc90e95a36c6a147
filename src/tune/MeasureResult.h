/// The outcome of one measurement trial (its costs, or the error that ended it), apart from the
/// compiler's task types (Measure.h, which includes this): the runtime-only measurement client
/// (MeasureWorkerClient.h) and the device server fill it without linking the compiler.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tune/MeasureErrorNo.h"

namespace tessel::tune {

/// The least cost a record may carry, in seconds. No kernel call takes less than a nanosecond
/// (the fastest shipped record takes 17 ns); a cost of 0 or 5e-324 s is damage or forgery, and
/// would outrank every real measurement (and print as inf GFLOPS).
inline constexpr double kMinRecordCostSeconds = 1e-9;

/// The outcome of one trial.
struct MeasureResult {
  std::vector<double> costs;  ///< seconds per call, one entry per repeat; empty on error
  MeasureErrorNo errorNo = MeasureErrorNo::NoError;
  std::string errorMessage;
  int callsPerRepeat = 0;     ///< `number` as finally used (raised by min_repeat_ms)
  double buildSeconds = 0;
  double runSeconds = 0;      ///< wall time of the run, worker restarts included
  double loadSeconds = 0;     ///< of which loading the library (not recorded in logs)
  double allCost = 0;         ///< buildSeconds + runSeconds: what the trial cost the tuner
  double timestamp = 0;       ///< Unix time (seconds) when the trial ended
  /// The costs come from the interleaved re-measurement at the end of a task that decided its
  /// schedule (tune/autotvm/TuneTask.h); `confirmation` says against what.
  bool confirmed = false;
  nlohmann::json confirmation;  ///< null unless confirmed
  bool underLoad = false;       ///< measured while the machine was busy (see LoadMonitor.h)
  /// Not measured: the candidate's steps are those of config `sameAs` of the same task, measured
  /// before in the same log, and this is that config's result (its costs or error), copied
  /// (tune/autotvm/TuneTask.h). Unset for every measured result.
  std::optional<int64_t> sameAs;
  bool ok() const { return errorNo == MeasureErrorNo::NoError; }
  /// The candidate's cost: the median of `costs` (robust to the odd slow repeat that a mean
  /// or a single sample would make the verdict), +infinity for a failed trial.
  double cost() const;
};

/// A result carrying an error (timestamped now).
MeasureResult errorResult(MeasureErrorNo errorNo, std::string message);

/// Seconds since the Unix epoch, as a double.
double unixTimeSeconds();

/// Why `result`'s costs cannot be measurements of any kernel: one not finite or negative, or
/// one under kMinRecordCostSeconds. Empty when they can be, and for a failed result.
std::string impossibleCosts(const MeasureResult& result);

/// Makes `result` a RuntimeDeviceError saying that `device` ("the measurement worker '...'",
/// "the device server at ...") answered a timing that cannot be true, and `why`.
void refuseTiming(MeasureResult& result, const std::string& device, const std::string& why);

}  // namespace tessel::tune
