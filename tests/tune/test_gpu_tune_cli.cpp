// `tessel tune` for a GPU target on this machine (`--runner local`; PoCL's OpenCL device here):
// the network's convolutions tuned with the gpu_default template, the log's records, the build
// with them and the timing on the device next to the untuned build; a layer's Winograd and
// direct forms chosen by the records; the options a GPU target refuses.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "common/TesselCli.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace std::chrono_literals;
using testsupport::expectContains;

TEST(GpuTuneCli, TunesAnOpenclNetworkLocallyAndTimesItOnTheDevice) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir("tessel-gpu-tune");
  std::string log = dir.path() + "/r18.log";
  SubprocessOptions o;
  o.timeout = 180s;
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "opencl", "--ops", "conv2d",
                          "--tasks", "1,2", "--tuner", "random", "--n-trial", "3", "--batch-size", "3", "--check-correctness",
                          "--evaluate-repeat", "2", "--log", log, "-o", dir.path() + "/tuned"},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "GPU kernels verified against the limits of opencl:0");
  // Tasks 1 and 2 as `tessel tasks` numbers them: the first convolution with its template and
  // with gpu_default.
  expectContains(r.output, " tasks; tuning 2 of them (--tasks, --ops):\n   1  conv1_relu ");
  expectContains(r.output, "\n   2  conv1_relu                   gpu_default ");
  expectContains(r.output, "[Task  2/");
  expectContains(r.output, "Mean inference time (std dev): ");
  expectContains(r.output, "Untuned (default GPU schedules): ");
  // The speedup with the rounds' own ratios: how far this machine's noise moves it.
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(on opencl:0; speedup [0-9.]+x \(timed in alternation; round by round [0-9.]+x, )"
                                                     R"(the middle half of the rounds [0-9.]+-[0-9.]+x(: a tie on this machine)?\))")))
      << r.output;
  auto records = tune::readRecords(log);
  int ok = 0;
  for (const auto& record : records.records) {
    EXPECT_EQ(record.target, "opencl");
    ok += record.ok();
  }
  EXPECT_GE(ok, 2) << r.output;
}

TEST(GpuTuneCli, TunesAnNhwcNetworkWithTheNhwcTemplate) {
  // --desired-layout NHWC: the direct convolutions are tuned with conv2d_nhwc.cuda (and
  // gpu_default), checked against the reference on the device, and the build takes the records.
  TESSEL_REQUIRE_OPENCL();
  TempDir dir("tessel-gpu-tune");
  std::string log = dir.path() + "/r18.log";
  SubprocessOptions o;
  o.timeout = 180s;
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "opencl",
                          "--desired-layout", "NHWC", "--ops", "conv2d", "--tasks", "1", "--tuner", "random", "--n-trial", "3",
                          "--batch-size", "3", "--check-correctness", "--evaluate-repeat", "2", "--log", log, "-o",
                          dir.path() + "/tuned"},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "conv2d_nhwc.cuda");
  expectContains(r.output, "Mean inference time (std dev): ");
  int nhwc = 0;
  for (const auto& record : tune::readRecords(log).records) nhwc += record.ok() && record.task.templateName == "conv2d_nhwc.cuda";
  EXPECT_GE(nhwc, 2) << r.output;
}

// Under --winograd auto (the default) a GPU target's stride-1 3x3 layers are tuned both ways,
// the direct templates and conv2d_nchw_winograd.cuda, right after each other; a build with the
// records takes, per layer, the form whose best record is faster (the record's template says
// which): here the records are edited to make each side the slow one in turn. Untuned, the layers
// stay direct; --winograd 2|4 makes every one Winograd.
TEST(GpuTuneCli, RecordsChooseBetweenWinogradAndTheDirectConvolutionPerLayer) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir("tessel-gpu-tune");
  std::string log = dir.path() + "/both.log";
  SubprocessOptions o;
  o.timeout = 180s;
  // Tasks 4 and 6 (as `tessel tasks` numbers them): layer1's second convolution (a residual add
  // in its epilogue) directly (conv2d_nchw.cuda; 5 is its gpu_default) and as Winograd.
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "opencl", "--ops", "conv2d",
                          "--tasks", "4,6", "--tuner", "random", "--n-trial", "2", "--batch-size", "2", "--confirm-top", "0",
                          "--no-evaluate", "--log", log},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "   4  layer1_0_1_relu              conv2d_nchw.cuda");
  expectContains(r.output, "   6  layer1_0_1_relu              conv2d_nchw_winograd.cuda");
  // Two layers share the workload: both are measured both ways.
  expectContains(r.output, "; measured both ways: ");
  auto read = tune::readRecords(log);
  int winogradRecords = 0;
  for (const auto& record : read.records) winogradRecords += record.task.templateName == "conv2d_nchw_winograd.cuda" && record.ok();
  ASSERT_GT(winogradRecords, 0) << r.output;
  // The log with one side made slow (a second per call).
  auto slowened = [&](const std::string& templateName, const std::string& path) {
    std::ofstream out(path);
    for (auto record : read.records) {
      if (record.task.templateName == templateName && record.ok())
        for (double& c : record.result.costs) c = 1.0;
      out << tune::recordToLine(record) << "\n";
    }
    return path;
  };
  int modules = 0;
  auto compile = [&](const std::string& records, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{tesselCli(), "compile", "--model", "resnet-18", "--image-size", "32", "--target", "opencl",
                                  "-o", dir.path() + "/module" + std::to_string(modules++)};
    if (!records.empty()) argv.insert(argv.end(), {"--records", records});
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto compiled = runSubprocess(argv, o);
    EXPECT_TRUE(compiled.ok()) << compiled.describe() << "\n" << compiled.output;
    return compiled.output;
  };
  std::string slowWinograd = compile(slowened("conv2d_nchw_winograd.cuda", dir.path() + "/slow_w.log"));
  expectContains(slowWinograd, "Winograd for 0 of 13 stride-1 3x3 convolutions (F(4x4): 0, F(2x2): 0); measured both ways: 0 faster as "
                               "Winograd, 2 faster direct; by the rules: 11");
  std::string slowDirect = compile(slowened("conv2d_nchw.cuda", dir.path() + "/slow_d.log"));
  expectContains(slowDirect, "Winograd for 2 of 13 stride-1 3x3 convolutions (F(4x4): 2, F(2x2): 0); measured both ways: 2 faster as "
                             "Winograd, 0 faster direct; by the rules: 11");
  expectContains(slowDirect, "applied tuned records to 1 of ");  // the Winograd function's record
  // Without records: direct; forced: every candidate, F(2x2) here.
  expectContains(compile("", {"--winograd", "never"}), "Winograd for 0 of 13 stride-1 3x3 convolutions");
  expectContains(compile("", {"--winograd", "2"}), "Winograd for 13 of 13 stride-1 3x3 convolutions (F(4x4): 0, F(2x2): 13)");
  expectContains(compile("", {"--winograd", "6"}),
                 "Winograd for 13 of 13 stride-1 3x3 convolutions (F(6x6): 13, F(4x4): 0, F(2x2): 0)");
  std::string untuned = compile("", {"--winograd", "auto"});
  expectContains(untuned, "Winograd for 0 of 13 stride-1 3x3 convolutions");
  EXPECT_EQ(untuned.find("measured both ways"), std::string::npos) << untuned;
}

TEST(GpuTuneCli, OptionsAGpuTargetRefuses) {
  TempDir dir("tessel-gpu-tune");
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{tesselCli(), "tune", "--model", "resnet-18", "--target", "opencl", "--log", dir.path() + "/x.log"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runSubprocess(argv, {});
  };
  auto host = run({"--target-host", "opencl"});
  EXPECT_FALSE(host.ok());
  expectContains(host.output, "--target-host 'opencl' with --target 'opencl': not a CPU target");
  auto flush = run({"--enable-cpu-cache-flush"});
  EXPECT_FALSE(flush.ok());
  expectContains(flush.output, "GPU candidates are timed on the device");
  std::string why;
  if (!runtime::cudaDeviceAvailable(&why)) {
    // Without a GPU here, local CUDA tuning is refused before any work, saying why.
    auto cuda = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--target", "cuda", "--log", dir.path() + "/c.log"}, {});
    EXPECT_FALSE(cuda.ok());
    expectContains(cuda.output, "--target cuda --runner local: candidates run on this machine's device, and no CUDA device");
  }
}
