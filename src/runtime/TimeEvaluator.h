/// Measuring how long a function takes, the way tuning and benchmarking need it: warm-up calls,
/// `repeat` measurements of `number` back-to-back calls each, an automatic raise of `number`
/// until one measurement lasts at least `minRepeatMs` (so that cheap kernels are not drowned in
/// timer noise), an optional cool-down and an optional last-level-cache flush between
/// measurements. Unlike TVM's time evaluator, flushing the cache never silently resets `number`
/// or `minRepeatMs`: the flush happens outside the timed region, before each measurement.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tessel::runtime {

struct TimeEvaluatorOptions {
  int number = 1;           ///< calls per measurement (a starting value when minRepeatMs > 0)
  int repeat = 1;           ///< measurements, each giving one cost
  double minRepeatMs = 0;   ///< raise `number` until one measurement lasts at least this long
  double cooldownMs = 0;    ///< sleep between measurements
  bool flushCache = false;  ///< write and read a buffer larger than the last-level cache before each measurement
  int warmup = 1;           ///< untimed calls before the first measurement
  /// When > 0 (seconds) and the last warm-up call took longer: one timed call is the only
  /// cost. Tuning sets it to a multiple of the task's best cost, so that a candidate far
  /// slower than the best, which needs no precise figure to lose, costs two calls, not
  /// warm-up, calibration and `repeat` measurements.
  double stopAboveSeconds = 0;
};

struct TimingResult {
  std::vector<double> costs;  ///< seconds per call, one per measurement (repeat entries)
  double mean = 0;
  double median = 0;
  double stddev = 0;          ///< population standard deviation of costs
  double min = 0;
  int number = 0;             ///< the calls per measurement finally used
  int64_t totalCalls = 0;     ///< every call made: warm-up, calibration and measured
  bool stoppedEarly = false;  ///< stopAboveSeconds cut the measurement to one call
};

/// A monotonic clock in seconds; replaceable so that tests can use synthetic time.
using SecondsClock = std::function<double()>;
/// std::chrono::steady_clock in seconds.
double steadySeconds();

/// Times `call` as the options say. Calibration (when minRepeatMs > 0) happens in the first
/// measurement(s): while a measurement lasts less than minRepeatMs, it is discarded and `number`
/// is raised (scaled by how far the measurement fell short, at least x1.6); once one reaches
/// minRepeatMs, `number` stays fixed and that measurement is the first cost. Throws Error for
/// invalid options; exceptions of `call` propagate.
TimingResult timeFunction(const std::function<void()>& call, const TimeEvaluatorOptions& options);
/// The same with a given clock (tests).
TimingResult timeFunction(const std::function<void()>& call, const TimeEvaluatorOptions& options,
                          const SecondsClock& clock);

/// Times several functions in alternation: `repeat` rounds, each measuring every function once
/// (number calibrated per function first, as timeFunction does), round r starting with
/// function r mod n so that no function keeps the first place. A change in the machine's
/// speed hits them alike, so their ratio is the same-run comparison a speedup claims to be.
std::vector<TimingResult> timeInterleaved(const std::vector<std::function<void()>>& calls, const TimeEvaluatorOptions& options);

/// The median over the rounds of timeInterleaved of `numerator`'s cost divided by
/// `denominator`'s in the same round: the paired comparison, in which a slow phase of the
/// machine that spans a round cancels out, so that it needs fewer rounds than the ratio of the
/// two medians to settle (the tuner confirms a candidate against the default the same way).
double medianRoundRatio(const TimingResult& numerator, const TimingResult& denominator);

/// The rounds' own ratios of two results of timeInterleaved (numerator's cost over
/// denominator's in the same round): their median and the middle half of them (the quartiles,
/// interpolated), which says how far the machine's noise moves one comparison.
struct RoundRatios {
  double median = 0, lowerQuartile = 0, upperQuartile = 0;
  /// Whether 1 lies inside the middle half: the two are a tie on this machine.
  bool tie() const { return lowerQuartile <= 1.0 && 1.0 <= upperQuartile; }
};
RoundRatios roundRatios(const TimingResult& numerator, const TimingResult& denominator);

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
double medianOf(std::vector<double> values);

/// Fills the statistics of a result from its costs.
void computeStatistics(TimingResult& result);

/// Evicts the caches by writing and reading a buffer of twice the last-level cache size
/// (target::hostCpu()).
void flushLastLevelCache();

}  // namespace tessel::runtime
