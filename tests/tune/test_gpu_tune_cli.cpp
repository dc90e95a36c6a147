// `tessel tune` for a GPU target on this machine (`--runner local`; PoCL's OpenCL device here):
// the network's convolutions tuned with the gpu_default template, the log's records, the build
// with them and the timing on the device next to the untuned build; the options a GPU target
// refuses.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "common/TesselCli.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
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
  expectContains(r.output, "Extracted 2 tasks:");
  expectContains(r.output, "[Task  2/ 2]  Current/Best: ");
  expectContains(r.output, "Mean inference time (std dev): ");
  expectContains(r.output, "Untuned (default GPU schedules): ");
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
