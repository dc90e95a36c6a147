/// How a candidate is timed, wherever it runs: the options every runner (LocalRunner,
/// RpcRunner) and the device server share, with one validate() for all of them, so that a
/// bad value gets the same message whichever way it arrived (a command line, a request).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "target/Target.h"

namespace tessel::tune {

struct MeasureOptions {
  int number = 4;                 ///< calls per measurement (a starting value when min_repeat_ms > 0)
  int repeat = 3;                 ///< measurements, one cost each; a candidate's cost is their median
  double minRepeatMs = 0;         ///< raise `number` until one measurement lasts this long
  /// Seconds one candidate may take to load, check and run. The time the measurement itself
  /// asks for (repeat measurements of min_repeat_ms, the cache flushes) is added on top, so a
  /// large min_repeat_ms never turns a fast kernel into a false RunTimeoutError.
  double timeoutSeconds = 10;
  double cooldownIntervalSeconds = 0;  ///< at least this long between two candidates' measurements
  bool enableCpuCacheFlush = false;    ///< flush the last-level cache before every call (cold caches)
  bool checkCorrectness = false;       ///< compare outputs with the task's reference
  double tolerance = 1e-4;             ///< relative error allowed for float outputs (integers: exact)
  uint64_t seed = 1;                   ///< of the random inputs

  /// Throws Error "<who>: <field> must be ..., got X" naming the first invalid field.
  void validate(const std::string& who) const;
  /// How long a worker may take for one candidate before it is killed: the timeout plus what
  /// the measurement itself asks for (calibration and `repeat` measurements of min_repeat_ms
  /// that may overshoot it, and a generous 0.2 s per cache flush).
  std::chrono::milliseconds runDeadline() const;
  /// The relative error a candidate for `target` may have: `tolerance`, or at least TF32's
  /// where the target lets products round their operands to TF32 (-matmul-precision=tf32).
  double toleranceFor(const target::Target& target) const;
  bool operator==(const MeasureOptions&) const = default;
};

}  // namespace tessel::tune
