// Seeds 000 and 002 as a user runs them: a tracker and two `tessel server --device vta --key sim`
// servers, `tessel tune --target vta --runner rpc --key sim` extracting the seed's ten tasks and
// tuning one of them there; every trial is logged, each valid one with the modelled time of its
// program (cycles / clock, recomputed here from the record's steps), each refused one with its
// reason; then the network runs with the best records (seed 002's closing lines).
#include <gtest/gtest.h>

#include "RpcTestSupport.h"
#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "support/Subprocess.h"
#include "tune/RecordLog.h"
#include "vta/Simulator.h"
#include "vta/VtaMeasurement.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::rpctest;
using namespace std::chrono_literals;
using testsupport::expectContains;

TEST(RpcVtaTune, TunesThroughTheTrackerOnTwoSimServersAndLogsEveryTrial) {
  Cluster c;
  c.startTracker();
  for (int i = 0; i < 2; ++i) c.startServer("sim", {"--device", "vta"});
  ASSERT_TRUE(c.waitForDevices("sim", 2, 2));
  std::string log = c.dir() + "/vta.log";
  SubprocessOptions o;
  o.timeout = 120s;
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--target", "vta", "--target-host", "cpu", "--runner", "rpc",
                          "--key", "sim", "--tracker", c.trackerAddress(), "--tuner", "random", "--n-trial", "12", "--batch-size",
                          "4", "--tasks", "8", "--log", log},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "Extracted 10 conv2d tasks:\n(1, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1)\n");
  expectContains(r.output, "Tuning...\n[Task  8/10]  Current/Best: ");  // numbered as listed
  expectContains(r.output, "Progress: (12/12)");
  expectContains(r.output, "Compile...\ncompiled resnet-18 for VTA");
  expectContains(r.output, "Upload...\nEvaluate inference time cost...\n");
  expectContains(r.output, "gemm_counter    :          6623232");
  expectContains(r.output, "Mean inference time (std dev): ");

  auto records = tune::readRecords(log);
  ASSERT_EQ(records.records.size(), 12u);  // every trial, none confirmed again (modelled time is exact)
  // The task: (1, 14, 14, 256, 512, 1, 1, 0, 0, 2, 2), its measurement program made again here.
  vta::Conv2dWorkload w;
  w.inputBlocks = 16;
  w.outputBlocks = 32;
  w.height = w.width = 14;
  w.strideHeight = w.strideWidth = 2;
  w.outHeight = w.outWidth = 7;
  vta::Conv2dPackedProblem problem = vta::conv2dPackedTaskProblem(w, vta::HardwareConfig{});
  int valid = 0;
  for (const auto& record : records.records) {
    EXPECT_EQ(record.target, "vta");
    EXPECT_EQ(record.task.templateName, "conv2d_packed.vta");
    ASSERT_TRUE(record.config.has_value());
    if (!record.ok()) {
      EXPECT_EQ(record.result.errorNo, tune::MeasureErrorNo::InstantiationError);
      expectContains(record.result.errorMessage, "buffer");
      continue;
    }
    ++valid;
    vta::Simulator simulator;
    vta::conv2dPackedProgram(problem, vta::conv2dTilingOfSteps(problem, record.steps)).runOn(simulator);
    EXPECT_DOUBLE_EQ(record.cost(), simulator.lastRunSeconds());
  }
  EXPECT_GT(valid, 0);
  int serversUsed = 0;
  for (int i = 0; i < 2; ++i) serversUsed += c.server(i).output().find("closed by its client") != std::string::npos;
  EXPECT_GE(serversUsed, 1);
  ASSERT_TRUE(c.waitForDevices("sim", 2, 2)) << "every device is free after the run";
}

TEST(RpcVtaTune, ServerOptions) {
  auto r = runSubprocess({tesselCli(), "server", "--device", "vta", "--worker", "/bin/true", "--port", "0"}, {});
  EXPECT_FALSE(r.ok());
  expectContains(r.output, "--device vta brings its own worker");
  auto bad = runSubprocess({tesselCli(), "server", "--device", "gpu"}, {});
  EXPECT_FALSE(bad.ok());
  expectContains(bad.output, "--device");
}
