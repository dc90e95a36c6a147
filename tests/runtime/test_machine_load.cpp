// The machine's load and the kernel thread policy that follows from it (runtime/MachineLoad.h),
// and timing several functions in alternation (runtime/TimeEvaluator.h).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "runtime/MachineLoad.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"

using namespace tessel::runtime;

namespace {

TEST(MachineLoad, FreeCoresLeaveAThirdOfACoreOfSlack) {
  MachineLoad load;
  load.cores = 2;
  load.otherBusyCores = 0;
  EXPECT_EQ(load.freeCores(), 2);
  load.otherBusyCores = 0.25;  // a little background noise
  EXPECT_EQ(load.freeCores(), 2);
  load.otherBusyCores = 0.45;  // a program that sleeps now and then still preempts a kernel thread
  EXPECT_EQ(load.freeCores(), 1);
  load.otherBusyCores = 1.0;
  EXPECT_EQ(load.freeCores(), 1);
  load.otherBusyCores = 2.0;
  EXPECT_EQ(load.freeCores(), 1);  // never fewer than one
  EXPECT_EQ(load.describe(), "other processes keep 2.0 of 2 cores busy");
}

TEST(MachineLoad, AProcessSpinningOnACoreIsSeenAsOursWhenNamed) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // never outlives the test
    volatile uint64_t spins = 0;
    for (;;) spins = spins + 1;
  }
  MachineLoad load = sampleMachineLoad(std::chrono::milliseconds(300));
  // Named as ours (a measurement worker is), the same child is this program's own work.
  MachineLoad ours = sampleMachineLoad(std::chrono::milliseconds(300), {int(child)});
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_GE(load.cores, 1);
  EXPECT_LE(load.otherBusyCores, double(load.cores));
  EXPECT_GE(load.otherBusyCores, 0.6) << "a child spinning on a core for the whole sample";
  EXPECT_LT(load.ourBusyCores, 0.3) << "this test sleeps while it samples";
  if (load.cores >= 2) {
    EXPECT_LT(load.freeCores(), load.cores);
  }
  EXPECT_GE(ours.ourBusyCores, 0.6) << "the child named as ours";
  EXPECT_LE(ours.ourBusyCores, double(ours.cores));
}

TEST(MachineLoad, TheProbeTimesTheKernelThreads) {
  double seconds = probeKernelThreads(2);
  EXPECT_GT(seconds, 0);
  EXPECT_LT(seconds, 5);
}

TEST(TimeEvaluator, InterleavedTimingAlternatesTheFunctionsAndRotatesWhoGoesFirst) {
  std::vector<char> order;
  TimeEvaluatorOptions options;
  options.repeat = 4;
  options.warmup = 0;
  auto results = timeInterleaved(
      {[&] { order.push_back('a'); }, [&] { order.push_back('b'); }, [&] { order.push_back('c'); }}, options);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) EXPECT_EQ(r.costs.size(), 4u);
  // After the calibration of each (a, b, c), every round measures each once, round r starting
  // with the r-th: abc, bca, cab, abc (a fixed order read two copies of a module 6-7% apart).
  std::string text(order.begin(), order.end());
  std::string runs;
  for (char c : text)
    if (runs.empty() || runs.back() != c) runs.push_back(c);
  EXPECT_EQ(runs, "abcabcbcacababc") << text;
}

TEST(TimeEvaluator, TheRoundRatioPairsTheRounds) {
  // b is 10% faster than a in every round but the third, when the machine slowed during a's
  // measurement only; the slow phase then lasts (rounds 4 and 5) for both.
  TimingResult a, b;
  a.costs = {2.0, 2.0, 4.0, 4.0, 4.0};
  b.costs = {1.8, 1.8, 1.8, 3.6, 3.6};
  computeStatistics(a);
  computeStatistics(b);
  EXPECT_NEAR(b.median / a.median, 0.45, 1e-12);    // the medians' ratio, misled by the phase
  EXPECT_NEAR(medianRoundRatio(b, a), 0.9, 1e-12);  // the rounds' own ratios: .9 .9 .45 .9 .9
  // An even count of rounds: the mean of the middle two ratios (.9 .9 .9 1.8).
  a.costs = {2.0, 1.0, 4.0, 4.0};
  b.costs = {1.8, 1.8, 3.6, 3.6};
  EXPECT_NEAR(medianRoundRatio(b, a), 0.9, 1e-12);
  b.costs.pop_back();
  EXPECT_THROW(medianRoundRatio(b, a), tessel::Error);
}

TEST(TimeEvaluator, TheRoundRatiosMiddleHalfSaysWhenAComparisonIsATie) {
  TimingResult a, b;
  a.costs = {1.0, 1.0, 1.0, 1.0};
  b.costs = {1.1, 1.2, 0.9, 1.0};  // sorted ratios .9 1.0 1.1 1.2
  RoundRatios r = roundRatios(b, a);
  EXPECT_NEAR(r.median, 1.05, 1e-12);
  EXPECT_NEAR(r.lowerQuartile, 0.975, 1e-12);  // a quarter of the way from the 1st to the 4th: 0.75 of .9 .. 1.0
  EXPECT_NEAR(r.upperQuartile, 1.125, 1e-12);
  EXPECT_TRUE(r.tie());
  b.costs = {1.1, 1.2, 1.05, 1.15};  // every round slower: not a tie
  EXPECT_FALSE(roundRatios(b, a).tie());
  EXPECT_NEAR(roundRatios(b, a).lowerQuartile, 1.0875, 1e-12);
  b.costs = {1.1};
  a.costs = {1.0};
  EXPECT_NEAR(roundRatios(b, a).lowerQuartile, 1.1, 1e-12);  // one round: its ratio everywhere
  EXPECT_NEAR(roundRatios(b, a).upperQuartile, 1.1, 1e-12);
}

}  // namespace
