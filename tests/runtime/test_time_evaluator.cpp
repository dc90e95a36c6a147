#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "runtime/TimeEvaluator.h"
#include "common/ErrorText.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::runtime;

namespace {


/// Synthetic time: each call advances the clock by a chosen cost, so tests never depend on how
/// fast this machine happens to be.
struct FakeTime {
  double now = 0;
  int64_t calls = 0;
  SecondsClock clock() {
    return [this] { return now; };
  }
};

}  // namespace

TEST(TimeEvaluator, CountsCallsExactly) {
  int64_t calls = 0;
  auto result = timeFunction([&] { ++calls; }, {.number = 3, .repeat = 4, .warmup = 2});
  EXPECT_EQ(calls, 3 * 4 + 2);
  EXPECT_EQ(result.totalCalls, calls);
  EXPECT_EQ(result.number, 3);
  EXPECT_EQ(result.costs.size(), 4u);

  calls = 0;
  result = timeFunction([&] { ++calls; }, {.number = 5, .repeat = 2, .warmup = 0});
  EXPECT_EQ(calls, 10);
  calls = 0;
  result = timeFunction([&] { ++calls; }, TimeEvaluatorOptions{});
  EXPECT_EQ(calls, 2);  // one warm-up, one measured
  EXPECT_EQ(result.costs.size(), 1u);
}

TEST(TimeEvaluator, CostsArePerCallFromTheClock) {
  FakeTime time;
  auto result = timeFunction([&] { time.now += 0.002; }, {.number = 4, .repeat = 3}, time.clock());
  ASSERT_EQ(result.costs.size(), 3u);
  for (double c : result.costs) EXPECT_NEAR(c, 0.002, 1e-12);
  EXPECT_NEAR(result.mean, 0.002, 1e-12);
  EXPECT_NEAR(result.stddev, 0, 1e-12);
}

TEST(TimeEvaluator, MinRepeatRaisesNumberForACheapFunction) {
  FakeTime time;
  int64_t calls = 0;
  auto result = timeFunction(
      [&] {
        time.now += 1e-6;  // one microsecond per call
        ++calls;
      },
      {.number = 1, .repeat = 5, .minRepeatMs = 2, .warmup = 1}, time.clock());
  EXPECT_GE(result.number, 2000);
  EXPECT_LE(result.number, 4000);  // scaled from the measurement, not grown blindly
  EXPECT_EQ(result.costs.size(), 5u);
  for (double c : result.costs) {
    EXPECT_NEAR(c, 1e-6, 1e-12);
    EXPECT_GE(c * result.number, 0.002 * (1 - 1e-9));  // every measurement reached minRepeatMs
  }
  EXPECT_EQ(result.totalCalls, calls);
  // Calibration runs are extra: warm-up + discarded measurements + 5 kept ones.
  EXPECT_GT(calls, 1 + 5 * int64_t(result.number));
}

TEST(TimeEvaluator, NumberIsFixedAfterCalibration) {
  // The first calls are cheap, later ones expensive: once calibrated, number must not change.
  FakeTime time;
  int64_t calls = 0;
  auto result = timeFunction(
      [&] {
        time.now += calls < 100 ? 1e-5 : 1e-3;
        ++calls;
      },
      {.number = 1, .repeat = 3, .minRepeatMs = 1, .warmup = 0}, time.clock());
  // 1 call (10 us) is too short; the next measurement takes ~110 calls, reaching 1 ms.
  EXPECT_EQ(result.totalCalls, calls);
  EXPECT_EQ(calls, 1 + 3 * int64_t(result.number));
  EXPECT_GT(result.number, 1);
}

TEST(TimeEvaluator, SlowFunctionKeepsNumber) {
  FakeTime time;
  int64_t calls = 0;
  auto result = timeFunction(
      [&] {
        time.now += 0.005;
        ++calls;
      },
      {.number = 2, .repeat = 3, .minRepeatMs = 1, .warmup = 1}, time.clock());
  EXPECT_EQ(result.number, 2);
  EXPECT_EQ(calls, 1 + 2 * 3);
}

TEST(TimeEvaluator, FlushingNeverDropsNumberOrMinRepeat) {
  auto run = [](bool flush) {
    FakeTime time;
    return timeFunction([&] { time.now += 1e-6; }, {.number = 1, .repeat = 2, .minRepeatMs = 1, .flushCache = flush},
                        time.clock());
  };
  auto plain = run(false);
  auto flushed = run(true);
  EXPECT_EQ(flushed.number, plain.number);
  EXPECT_GT(flushed.number, 1);
  EXPECT_EQ(flushed.totalCalls, plain.totalCalls);

  int64_t calls = 0;
  auto real = timeFunction([&] { ++calls; }, {.number = 7, .repeat = 2, .flushCache = true, .warmup = 0});
  EXPECT_EQ(calls, 14);
  EXPECT_EQ(real.number, 7);
}

TEST(TimeEvaluator, RealClockReachesMinRepeat) {
  int64_t calls = 0;
  volatile int sink = 0;
  auto result = timeFunction(
      [&] {
        sink = sink + 1;
        ++calls;
      },
      {.number = 1, .repeat = 3, .minRepeatMs = 2});
  EXPECT_EQ(result.totalCalls, calls);
  ASSERT_EQ(result.costs.size(), 3u);
  // By construction the first kept measurement is the one that reached minRepeatMs.
  EXPECT_GE(result.costs[0] * result.number, 0.002 * (1 - 1e-9));
  for (double c : result.costs) EXPECT_GT(c, 0);
}

TEST(TimeEvaluator, CooldownSleepsBetweenRepeats) {
  auto start = std::chrono::steady_clock::now();
  timeFunction([] {}, {.repeat = 3, .cooldownMs = 20});
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(40));  // a lower bound: sleep_for never sleeps less
}

TEST(TimeEvaluator, StatisticsAreConsistent) {
  TimingResult r;
  r.costs = {4, 1, 3, 2};
  computeStatistics(r);
  EXPECT_DOUBLE_EQ(r.mean, 2.5);
  EXPECT_DOUBLE_EQ(r.median, 2.5);
  EXPECT_DOUBLE_EQ(r.min, 1);
  EXPECT_DOUBLE_EQ(r.stddev, std::sqrt(1.25));
  r.costs = {3, 1, 2};
  computeStatistics(r);
  EXPECT_DOUBLE_EQ(r.median, 2);
  EXPECT_DOUBLE_EQ(r.mean, 2);
  EXPECT_DOUBLE_EQ(r.stddev, std::sqrt(2.0 / 3.0));

  // From a run: repeat k takes (k+1) ms per call.
  FakeTime time;
  int repeatIndex = 0, callsInRepeat = 0;
  auto result = timeFunction(
      [&] {
        time.now += 0.001 * (repeatIndex + 1);
        if (++callsInRepeat == 2) {
          callsInRepeat = 0;
          ++repeatIndex;
        }
      },
      {.number = 2, .repeat = 5, .warmup = 0}, time.clock());
  ASSERT_EQ(result.costs.size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(result.costs[k], 0.001 * (k + 1), 1e-12);
  EXPECT_NEAR(result.mean, 0.003, 1e-12);
  EXPECT_NEAR(result.median, 0.003, 1e-12);
  EXPECT_NEAR(result.min, 0.001, 1e-12);
  EXPECT_NEAR(result.stddev, std::sqrt(2e-6), 1e-12);
}

TEST(TimeEvaluator, AFunctionSlowerThanTheStopBoundIsTimedByOneCall) {
  FakeTime time;
  int64_t calls = 0;
  auto slow = [&] {
    ++calls;
    time.now += 0.5;
  };
  TimeEvaluatorOptions o{.number = 4, .repeat = 3, .minRepeatMs = 100, .warmup = 1, .stopAboveSeconds = 0.2};
  auto result = timeFunction(slow, o, time.clock());
  EXPECT_TRUE(result.stoppedEarly);
  EXPECT_EQ(calls, 2);  // the warm-up and one timed call
  EXPECT_EQ(result.totalCalls, 2);
  EXPECT_EQ(result.number, 1);
  ASSERT_EQ(result.costs.size(), 1u);
  EXPECT_NEAR(result.costs[0], 0.5, 1e-12);

  // Under the bound (or without one) the measurement is the usual one.
  calls = 0;
  o.stopAboveSeconds = 0.6;
  result = timeFunction(slow, o, time.clock());
  EXPECT_FALSE(result.stoppedEarly);
  EXPECT_EQ(result.costs.size(), 3u);
  EXPECT_EQ(calls, 1 + 3 * result.number);
  // Without a warm-up there is nothing to judge by: no stop.
  o = {.number = 1, .repeat = 3, .warmup = 0, .stopAboveSeconds = 0.2};
  result = timeFunction(slow, o, time.clock());
  EXPECT_FALSE(result.stoppedEarly);
  EXPECT_EQ(result.costs.size(), 3u);
}

TEST(TimeEvaluator, RejectsBadOptions) {
  auto f = [] {};
  EXPECT_EQ(errorOf([&] { timeFunction(f, {.number = 0}); }), "time evaluator: number must be at least 1, got 0");
  EXPECT_EQ(errorOf([&] { timeFunction(f, {.repeat = -2}); }), "time evaluator: repeat must be at least 1, got -2");
  EXPECT_NE(errorOf([&] { timeFunction(f, {.minRepeatMs = -1}); }).find("minRepeatMs must be a non-negative"),
            std::string::npos);
  EXPECT_THROW(timeFunction(f, {.minRepeatMs = std::numeric_limits<double>::quiet_NaN()}), Error);
  EXPECT_NE(errorOf([&] { timeFunction(f, {.cooldownMs = -0.5}); }).find("cooldownMs must be a non-negative"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { timeFunction(f, {.warmup = -1}); }).find("warmup must not be negative"), std::string::npos);
  EXPECT_NE(errorOf([&] { timeFunction(f, {.stopAboveSeconds = -1}); }).find("stopAboveSeconds must be a non-negative"),
            std::string::npos);
  EXPECT_THROW(timeFunction(nullptr, {}), Error);
}

TEST(TimeEvaluator, ExceptionsOfTheCallPropagate) {
  EXPECT_THROW(timeFunction([] { throw std::runtime_error("boom"); }, {}), std::runtime_error);
}
