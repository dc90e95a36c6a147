#include "runtime/TimeEvaluator.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <thread>

#include "support/Error.h"
#include "target/HostCpu.h"

namespace tessel::runtime {

namespace {

constexpr int kMaxNumber = 1 << 30;

}  // namespace

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

/// A buffer of twice the last-level cache, allocated once per timing run.
class CacheFlusher {
 public:
  CacheFlusher() : words_(2 * size_t(target::hostCpu().llcBytes) / sizeof(uint64_t)), buffer_(new uint64_t[words_]) {}
  void flush() {
    // Write, then read back through a volatile sink so the compiler cannot drop either pass.
    uint64_t* p = buffer_.get();
    for (size_t i = 0; i < words_; ++i) p[i] = i;
    uint64_t sum = 0;
    for (size_t i = 0; i < words_; ++i) sum += p[i];
    volatile uint64_t sink = sum;
    (void)sink;
  }

 private:
  size_t words_;
  std::unique_ptr<uint64_t[]> buffer_;
};

}  // namespace

void flushLastLevelCache() { CacheFlusher().flush(); }

double medianOf(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void computeStatistics(TimingResult& result) {
  const auto& c = result.costs;
  if (c.empty()) {
    result.mean = result.median = result.stddev = result.min = 0;
    return;
  }
  double n = double(c.size());
  result.mean = std::accumulate(c.begin(), c.end(), 0.0) / n;
  result.median = medianOf(c);
  double squares = 0;
  for (double x : c) squares += (x - result.mean) * (x - result.mean);
  result.stddev = std::sqrt(squares / n);
  result.min = *std::min_element(c.begin(), c.end());
}

TimingResult timeFunction(const std::function<void()>& call, const TimeEvaluatorOptions& options) {
  return timeFunction(call, options, steadySeconds);
}

TimingResult timeFunction(const std::function<void()>& call, const TimeEvaluatorOptions& options,
                          const SecondsClock& clock) {
  TESSEL_CHECK(call != nullptr, "timeFunction: no function to time");
  TESSEL_CHECK(clock != nullptr, "timeFunction: no clock");
  TESSEL_CHECK(options.number >= 1, "time evaluator: number must be at least 1, got {}", options.number);
  TESSEL_CHECK(options.repeat >= 1, "time evaluator: repeat must be at least 1, got {}", options.repeat);
  TESSEL_CHECK(options.warmup >= 0, "time evaluator: warmup must not be negative, got {}", options.warmup);
  TESSEL_CHECK(std::isfinite(options.minRepeatMs) && options.minRepeatMs >= 0,
               "time evaluator: minRepeatMs must be a non-negative number of milliseconds, got {}",
               options.minRepeatMs);
  TESSEL_CHECK(std::isfinite(options.cooldownMs) && options.cooldownMs >= 0,
               "time evaluator: cooldownMs must be a non-negative number of milliseconds, got {}", options.cooldownMs);

  std::unique_ptr<CacheFlusher> flusher;
  if (options.flushCache) flusher = std::make_unique<CacheFlusher>();

  TESSEL_CHECK(std::isfinite(options.stopAboveSeconds) && options.stopAboveSeconds >= 0,
               "time evaluator: stopAboveSeconds must be a non-negative number of seconds, got {}", options.stopAboveSeconds);

  TimingResult result;
  double lastWarmup = 0;
  for (int i = 0; i < options.warmup; ++i) {
    double start = clock();
    call();
    lastWarmup = clock() - start;
  }
  result.totalCalls += options.warmup;
  if (options.stopAboveSeconds > 0 && options.warmup > 0 && lastWarmup > options.stopAboveSeconds) {
    if (flusher) flusher->flush();
    double start = clock();
    call();
    result.costs.push_back(clock() - start);
    result.totalCalls += 1;
    result.number = 1;
    result.stoppedEarly = true;
    computeStatistics(result);
    return result;
  }

  int number = options.number;
  double minRepeatSeconds = options.minRepeatMs / 1000.0;
  bool calibrated = options.minRepeatMs <= 0;
  bool first = true;
  while (int(result.costs.size()) < options.repeat) {
    if (!first && options.cooldownMs > 0)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options.cooldownMs));
    first = false;
    if (flusher) flusher->flush();

    double start = clock();
    for (int i = 0; i < number; ++i) call();
    double elapsed = clock() - start;
    result.totalCalls += number;

    if (!calibrated) {
      if (elapsed < minRepeatSeconds && number < kMaxNumber) {
        // Too short: discard, and aim 10% past the target from the measured time per call.
        double scaled = elapsed > 0 ? double(number) * minRepeatSeconds / elapsed * 1.1 : double(number) * 10;
        double grown = std::max({scaled, double(number) * 1.618, double(number) + 1});
        number = int(std::min(std::ceil(grown), double(kMaxNumber)));
        continue;
      }
      calibrated = true;
    }
    result.costs.push_back(elapsed / number);
  }
  result.number = number;
  computeStatistics(result);
  return result;
}

std::vector<TimingResult> timeInterleaved(const std::vector<std::function<void()>>& calls, const TimeEvaluatorOptions& options) {
  // Each function's `number`, from a calibration of its own (one measurement of it).
  std::vector<int> numbers;
  for (const auto& call : calls) {
    TimeEvaluatorOptions calibrate = options;
    calibrate.repeat = 1;
    numbers.push_back(timeFunction(call, calibrate).number);
  }
  std::vector<TimingResult> results(calls.size());
  // Round r starts with function r mod n: a function's place in the round (just after another
  // network's run, with the caches and the clock speed it left) counts for every function
  // alike. With a fixed order, two copies of one module read 6-7% apart on a 2-core VM.
  for (int round = 0; round < options.repeat; ++round)
    for (size_t j = 0; j < calls.size(); ++j) {
      size_t i = (size_t(round) + j) % calls.size();
      TimeEvaluatorOptions once = options;
      once.repeat = 1;
      once.number = numbers[i];
      once.minRepeatMs = 0;
      once.warmup = options.warmup;
      TimingResult r = timeFunction(calls[i], once);
      results[i].costs.push_back(r.costs.front());
      results[i].number = numbers[i];
      results[i].totalCalls += r.totalCalls;
    }
  for (auto& r : results) computeStatistics(r);
  return results;
}

double medianRoundRatio(const TimingResult& numerator, const TimingResult& denominator) {
  return roundRatios(numerator, denominator).median;
}

RoundRatios roundRatios(const TimingResult& numerator, const TimingResult& denominator) {
  TESSEL_CHECK(!numerator.costs.empty() && numerator.costs.size() == denominator.costs.size(),
               "the round ratios: the two results must have the same rounds, got {} and {}", numerator.costs.size(),
               denominator.costs.size());
  std::vector<double> ratios;
  for (size_t r = 0; r < numerator.costs.size(); ++r) ratios.push_back(numerator.costs[r] / denominator.costs[r]);
  std::sort(ratios.begin(), ratios.end());
  // The value at fraction p of the sorted ratios, between neighbours.
  auto at = [&](double p) {
    double position = p * double(ratios.size() - 1);
    size_t below = size_t(position);
    size_t above = std::min(below + 1, ratios.size() - 1);
    return ratios[below] + (ratios[above] - ratios[below]) * (position - double(below));
  };
  return {medianOf(ratios), at(0.25), at(0.75)};
}

}  // namespace tessel::runtime
