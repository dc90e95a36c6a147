// The load monitor (tune/LoadMonitor.h) on a runner whose probe is scripted: a slow probe is a
// busy machine, warned about once, waited for, and the batch flagged when it does not calm.
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

TEST(LoadMonitor, ASlowProbeIsABusyMachineWaitedForThenFlagged) {
  // Idle at 1 ms (three probes at the start), then twice as slow for good.
  ScriptedRunner runner({1e-3, 1e-3, 1e-3, 1e-3, 2e-3});
  std::FILE* out = std::tmpfile();
  LoadMonitorOptions options;
  options.sampleLoad = false;  // the probe alone decides: deterministic
  options.pauseSeconds = 0.6;
  options.warnTo = out;
  LoadMonitor monitor(runner, options);
  EXPECT_EQ(monitor.idleProbe(), 1e-3);
  EXPECT_FALSE(monitor.beforeRun(8));  // the fourth probe: still idle
  EXPECT_TRUE(monitor.beforeRun(8));   // slow, waited for, still slow: measured under load
  EXPECT_TRUE(monitor.beforeRun(4));
  EXPECT_EQ(monitor.candidatesMeasured(), 20);
  EXPECT_EQ(monitor.candidatesUnderLoad(), 12);
  EXPECT_GE(monitor.pausedSeconds(), 1.0);
  std::string text = readAll(out);
  EXPECT_NE(text.find("machine busy: measurements 100% slower than idle; results may be noisy"), std::string::npos) << text;
  EXPECT_EQ(text.find("machine busy", text.find("machine busy") + 1), std::string::npos) << "warned once per busy spell: " << text;
  EXPECT_NE(monitor.summary().find("12 of 20 candidates were measured under load"), std::string::npos) << monitor.summary();
  std::fclose(out);
}

TEST(LoadMonitor, AMachineThatCalmsDownWhileWaitedForIsNotFlagged) {
  ScriptedRunner runner({1e-3, 1e-3, 1e-3, 3e-3, 1.05e-3});
  std::FILE* out = std::tmpfile();
  LoadMonitorOptions options;
  options.sampleLoad = false;
  options.pauseSeconds = 5;
  options.warnTo = out;
  LoadMonitor monitor(runner, options);
  EXPECT_FALSE(monitor.beforeRun(8));  // slow once, then quiet again within the pause
  EXPECT_EQ(monitor.candidatesUnderLoad(), 0);
  std::string text = readAll(out);
  EXPECT_NE(text.find("machine busy: measurements 200% slower than idle"), std::string::npos) << text;
  EXPECT_NE(text.find("machine quiet again after"), std::string::npos) << text;
  std::fclose(out);
}

}  // namespace
