// The load monitor (tune/LoadMonitor.h) on a runner whose probe is scripted and a scripted
// clock: a slow probe is a busy machine, warned about once, waited for, and the batch flagged
// when it does not calm; the pauses stay within their share of the run.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>

#include "tune/LoadMonitor.h"

using namespace tessel::tune;

namespace {

class ScriptedRunner : public Runner {
 public:
  explicit ScriptedRunner(std::deque<double> probes) : probes_(std::move(probes)) {}
  std::vector<MeasureResult> run(const std::vector<MeasureInput>&, const std::vector<BuildResult>&) override { return {}; }
  bool needsReference(const MeasureTask&) const override { return false; }
  void setReference(const MeasureTask&, const BuildResult&) override {}
  std::optional<double> probeSeconds() override {
    double p = probes_.front();
    if (probes_.size() > 1) probes_.pop_front();
    ++probes;
    return p;
  }
  int probes = 0;

 private:
  std::deque<double> probes_;
};

std::string readAll(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += char(c);
  return text;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// Options on a scripted clock that only sleeps (and the test) advance, the probe alone deciding.
struct ScriptedTime {
  double seconds = 1000;
  LoadMonitorOptions options(std::FILE* out, double pauseSeconds, double pauseShare = 0.2) {
    LoadMonitorOptions o;
    o.pauseSeconds = pauseSeconds;
    o.pauseShare = pauseShare;
    o.sampleLoad = false;
    o.warnTo = out;
    o.clock = [this] { return seconds; };
    o.sleep = [this](double s) { seconds += s; };
    return o;
  }
};

TEST(LoadMonitor, ASlowProbeIsABusyMachineWaitedForThenFlagged) {
  // Idle at 1 ms (three probes at the start), then twice as slow for good.
  ScriptedRunner runner({1e-3, 1e-3, 1e-3, 1e-3, 2e-3});
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitorOptions options = time.options(out, 1.5);
  LoadMonitor monitor(runner, options);
  EXPECT_EQ(monitor.idleProbe(), 1e-3);
  EXPECT_FALSE(monitor.beforeRun(8));  // the fourth probe: still idle
  EXPECT_TRUE(monitor.beforeRun(8));   // slow, waited for, still slow: measured under load
  EXPECT_DOUBLE_EQ(monitor.pausedSeconds(), 1.5);
  EXPECT_TRUE(monitor.beforeRun(4));
  EXPECT_EQ(monitor.candidatesMeasured(), 20);
  EXPECT_EQ(monitor.candidatesUnderLoad(), 12);
  std::string text = readAll(out);
  EXPECT_NE(text.find("machine busy: measurements 100% slower than idle; results may be noisy"), std::string::npos) << text;
  EXPECT_EQ(count(text, "machine busy"), 1u) << "warned once per busy spell: " << text;
  EXPECT_NE(monitor.summary().find("12 of 20 candidates were measured under load (paused"), std::string::npos) << monitor.summary();
  std::fclose(out);
}

TEST(LoadMonitor, AMachineThatCalmsDownWhileWaitedForIsNotFlagged) {
  ScriptedRunner runner({1e-3, 1e-3, 1e-3, 3e-3, 3e-3, 3e-3, 3e-3, 1.05e-3});
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitorOptions options = time.options(out, 5);
  LoadMonitor monitor(runner, options);
  EXPECT_FALSE(monitor.beforeRun(8));  // slow for two readings (of two probes each), then quiet again within the pause
  EXPECT_EQ(monitor.candidatesUnderLoad(), 0);
  EXPECT_DOUBLE_EQ(monitor.pausedSeconds(), 1.0);
  std::string text = readAll(out);
  EXPECT_NE(text.find("machine busy: measurements 200% slower than idle"), std::string::npos) << text;
  EXPECT_NE(text.find("machine quiet again after 1.0 s; measuring"), std::string::npos) << text;
  std::fclose(out);
}

// A VM's core coming back from idle runs the first probe slow (the GPU host's Xeon: 48% of
// probes half a second apart over 1.25x, none right after another): the monitor probes again at
// once and believes a slow machine only when both probes say so.
TEST(LoadMonitor, OneSlowProbeThenAFastOneIsAWakingCoreNotABusyMachine) {
  ScriptedRunner runner({1e-3, 1e-3, 1e-3, 2.1e-3, 1.02e-3, 1e-3});
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitorOptions options = time.options(out, 5);
  LoadMonitor monitor(runner, options);
  EXPECT_FALSE(monitor.beforeRun(8));
  EXPECT_EQ(runner.probes, 5);  // three at the start, the slow one and the one right after it
  EXPECT_EQ(monitor.pausedSeconds(), 0);
  EXPECT_FALSE(monitor.beforeRun(8));
  EXPECT_EQ(runner.probes, 6);  // a fast probe is not read twice
  EXPECT_EQ(monitor.candidatesUnderLoad(), 0);
  EXPECT_EQ(readAll(out), "") << "no warning for a waking core";
  std::fclose(out);
}

// The idle figure is a low percentile of the probes, not the fastest: on an idle 16-core Xeon
// one probe in ten read over 1.25x the run's fastest, none over 1.25x its tenth percentile.
TEST(LoadMonitor, TheIdleFigureIsATenthPercentileNotOneLuckyProbe) {
  std::deque<double> probes(33, 1e-3);  // the machine's usual idle speed
  probes.push_back(0.75e-3);            // one lucky probe
  probes.push_back(1.2e-3);             // ordinary noise: 1.6x the lucky one, 1.2x the usual
  probes.push_back(2e-3);                 // then busy for good
  ScriptedRunner runner(probes);
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitor monitor(runner, time.options(out, 0.5));
  for (int batch = 0; batch < 31; ++batch) EXPECT_FALSE(monitor.beforeRun(1)) << batch;
  EXPECT_EQ(monitor.idleProbe(), 1e-3) << "the 3rd fastest of 34 probes";
  EXPECT_EQ(runner.probes, 34);
  EXPECT_FALSE(monitor.beforeRun(1)) << "1.2x the tenth percentile is not busy";
  EXPECT_TRUE(monitor.beforeRun(1)) << "2x is";
  EXPECT_EQ(monitor.candidatesUnderLoad(), 1);
  std::fclose(out);
}

// Other processes' load is sampled in whole clock ticks: one busy sample is taken again, and a
// machine is busy from others only when the second sample says so too.
TEST(LoadMonitor, OneBusySampleIsTakenAgainBeforeTheMachineIsCalledBusy) {
  ScriptedRunner runner({1e-3});
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitorOptions options = time.options(out, 5);
  options.sampleLoad = true;
  std::deque<double> others = {0.7, 0.0, 0.7, 0.6, 0.0};
  std::vector<int> named;
  options.sampleLoadOf = [&](const std::vector<int>& ours) {
    named = ours;
    tessel::runtime::MachineLoad load;
    load.cores = 2;
    load.otherBusyCores = others.front();
    others.pop_front();
    return load;
  };
  LoadMonitor monitor(runner, options);
  EXPECT_FALSE(monitor.beforeRun(4)) << "0.7, then 0.0 at once: two ticks of something";
  EXPECT_TRUE(monitor.beforeRun(4)) << "0.7, then 0.6: another program";
  EXPECT_FALSE(monitor.beforeRun(4));
  EXPECT_TRUE(others.empty());
  EXPECT_EQ(monitor.candidatesUnderLoad(), 4);
  EXPECT_TRUE(named.empty()) << "a scripted runner has no processes";
  EXPECT_NE(readAll(out).find("machine busy: other processes keep 0.6 of 2 cores busy"), std::string::npos);
  std::fclose(out);
}

// A machine busy for good (a shared host's hyperthread sibling can be, for minutes) costs the
// run at most the pause share of its time and one pause: past that, busy batches run at once,
// flagged, and the user is told once why tessel stopped waiting.
TEST(LoadMonitor, PausesStayWithinTheirShareOfTheRun) {
  ScriptedRunner runner({1e-3, 1e-3, 1e-3, 2e-3});
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitorOptions options = time.options(out, 10, 0.2);
  LoadMonitor monitor(runner, options);
  double start = time.seconds;
  for (int batch = 0; batch < 300; ++batch) {
    EXPECT_TRUE(monitor.beforeRun(8)) << batch;
    time.seconds += 1;  // building and running the batch
  }
  double elapsed = time.seconds - start;
  EXPECT_LE(monitor.pausedSeconds(), 10 + 0.2 * elapsed + 0.5);  // one pause step past the allowance at most
  EXPECT_GE(monitor.pausedSeconds(), 0.2 * elapsed - 0.5);        // and it did keep waiting within its share
  EXPECT_EQ(monitor.candidatesUnderLoad(), 2400);
  std::string text = readAll(out);
  EXPECT_EQ(count(text, "waiting for the machine has taken"), 1u) << text;
  EXPECT_NE(text.find("the most allowed (20% and one pause): busy batches run without waiting"), std::string::npos) << text;
  std::fclose(out);
}

// With no budget left, a busy spell that ends is still noticed: the next slow batch waits again
// once the share has refilled.
TEST(LoadMonitor, TheBudgetRefillsWithTime) {
  std::deque<double> probes(3, 1e-3);  // idle at the start
  // Slow for the whole first pause (1 + 20 readings of two probes: a slow probe is read again),
  // the next batch, and once more.
  probes.insert(probes.end(), 2 * 23, 2e-3);
  probes.push_back(1e-3);                 // then quiet for good
  ScriptedRunner runner(probes);
  std::FILE* out = std::tmpfile();
  ScriptedTime time;
  LoadMonitorOptions options = time.options(out, 10, 0.02);
  LoadMonitor monitor(runner, options);
  EXPECT_TRUE(monitor.beforeRun(8));  // waited the whole pause, still busy
  EXPECT_DOUBLE_EQ(monitor.pausedSeconds(), 10);
  EXPECT_TRUE(monitor.beforeRun(8));  // 0.2 s of budget left: no wait
  EXPECT_DOUBLE_EQ(monitor.pausedSeconds(), 10);
  time.seconds += 100;                 // a long stretch of work: 2 s of share again
  EXPECT_FALSE(monitor.beforeRun(8));  // slow, waited for, quiet after one step
  EXPECT_DOUBLE_EQ(monitor.pausedSeconds(), 10.5);
  std::string text = readAll(out);
  EXPECT_EQ(count(text, "waiting for the machine has taken 10 s of 10 s"), 1u) << text;
  std::fclose(out);
}

}  // namespace
