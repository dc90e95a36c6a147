// `tessel tune --runner rpc` as a user runs it: a tracker and three servers on loopback, a
// small tuning run measured on them, every trial in the log, and the tuned module timed on a
// remote device with `tessel benchmark --runner rpc`; and the runner's options checked.
#include <gtest/gtest.h>

#include "RpcTestSupport.h"
#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "tune/RecordLog.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::rpctest;
using namespace std::chrono_literals;
using testsupport::expectContains;

namespace {

std::vector<std::string> tuneCommand(const std::string& log, const std::vector<std::string>& runner) {
  std::vector<std::string> argv = {tesselCli(), "tune", "--model", "resnet-18", "--tasks", "2", "--tuner", "random",
                                   "--n-trial", "6", "--batch-size", "3", "--number", "1", "--repeat", "1",
                                   "--cooldown-interval", "0", "--log", log, "--no-evaluate"};
  argv.insert(argv.end(), runner.begin(), runner.end());
  return argv;
}

}  // namespace

TEST(RpcTuneCli, TunesThroughTheTrackerOnThreeServers) {
  Cluster c;
  c.startTracker();
  for (int i = 0; i < 3; ++i) c.startServer("tune3");
  ASSERT_TRUE(c.waitForDevices("tune3", 3, 3));
  std::string log = c.dir() + "/tune.log";
  SubprocessOptions o;
  o.timeout = 120s;
  std::string module = c.dir() + "/module";
  auto r = runSubprocess(
      tuneCommand(log, {"--runner", "rpc", "--key", "tune3", "--tracker", c.trackerAddress(), "-o", module}), o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "Progress: (6/6)");
  // Schedules are made for the devices' cores (their row partition), which they report.
  expectContains(r.output, "kernels are scheduled for target 'cpu -num-cores=");
  auto records = tune::readRecords(log);
  ASSERT_EQ(records.records.size(), 7u);  // six trials and the confirmation's decision
  EXPECT_TRUE(records.records.back().result.confirmed);
  for (const auto& record : records.records) {
    EXPECT_TRUE(record.ok()) << record.result.errorMessage;
    EXPECT_EQ(record.target.rfind("cpu -num-cores=", 0), 0u) << record.target;
  }
  int serversUsed = 0;
  for (int i = 0; i < 3; ++i) serversUsed += c.server(i).output().find("closed by its client") != std::string::npos;
  EXPECT_GE(serversUsed, 2) << "the batches spread over the servers";
  ASSERT_TRUE(c.waitForDevices("tune3", 3, 3)) << "every device is free after the run";

  // The tuned network, timed on one of the devices.
  auto bench = runSubprocess({tesselCli(), "benchmark", module, "--repeat", "3", "--min-repeat-ms", "0", "--runner", "rpc",
                              "--key", "tune3", "--tracker", c.trackerAddress()},
                             o);
  ASSERT_TRUE(bench.ok()) << bench.output;
  expectContains(bench.output, "Mean inference time (std dev): ");
  expectContains(bench.output, "over 3 measurements of 1 runs, on the 'tune3' device at 127.0.0.1:");
  // A module whose kernels are garbage fails on the device, which says why; the server lives on.
  writeFile(module + "/kernels.so", "not a shared library");
  auto broken = runSubprocess({tesselCli(), "benchmark", module, "--repeat", "1", "--runner", "rpc", "--key", "tune3",
                               "--tracker", c.trackerAddress()},
                              o);
  EXPECT_EQ(broken.exitCode, 1);
  expectContains(broken.output, "failed on the device server at 127.0.0.1:");
  expectContains(broken.output, "kernels.so");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c.server(i).running());
}

TEST(RpcTuneCli, BadRunnerOptionsFailClearly) {
  TempDir dir;
  SubprocessOptions o;
  o.timeout = 60s;
  auto unknown = runSubprocess(tuneCommand(dir.path() + "/a.log", {"--runner", "remote"}), o);
  EXPECT_NE(unknown.exitCode, 0);
  expectContains(unknown.output, "--runner: remote not in {local,rpc}");
  auto noKey = runSubprocess(tuneCommand(dir.path() + "/b.log", {"--runner", "rpc"}), o);
  EXPECT_NE(noKey.exitCode, 0);
  expectContains(noKey.output, "--runner rpc: needs --key");
  // Both before any work.
  EXPECT_EQ(unknown.output.find("Extract tasks"), std::string::npos);
  EXPECT_EQ(noKey.output.find("Extract tasks"), std::string::npos);
}
