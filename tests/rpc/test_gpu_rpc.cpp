// GPU candidates measured behind a tracker: `tessel server --device opencl` (PoCL here) reports
// its GPU's limits and measures GPU modules uploaded by the RPC runner; it refuses candidates
// for another kind of device, and a client refuses hardware parameters no kernel could be
// verified against. Then seed 003's flow end to end: tracker, server, `tessel tune --target
// "opencl -device=mali" --target-host "cpu -mtriple=aarch64-linux-gnu" --runner rpc --key
// rk3399` on resnet-18's convolutions, ending with the compiled module's inference time; and
// seed 001's, the same with `--scheduler auto` (the GPU sketches).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "RpcTestSupport.h"
#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "common/TesselCli.h"
#include "ops/Examples.h"
#include "rpc/DeviceSession.h"
#include "rpc/GpuParametersProto.h"
#include "rpc/RemoteDevice.h"
#include "rpc/RpcRunner.h"
#include "runtime/OpenclDevice.h"
#include "support/Subprocess.h"
#include "tune/LocalBuilder.h"
#include "tune/MeasureBatch.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/GpuTemplates.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::rpctest;
using namespace std::chrono_literals;
using testsupport::errorOf;
using testsupport::expectContains;

namespace {

rpc::proto::GpuParameters validParameters() {
  rpc::proto::GpuParameters p;
  rpc::writeGpuParameters("opencl:0", passes::GpuLimits::mali(), &p);
  return p;
}

}  // namespace

TEST(GpuRpcProto, GpuParametersRoundTripAndBadFieldsAreRefused) {
  passes::GpuLimits read = rpc::readGpuParameters(validParameters(), "the device server at h:1");
  EXPECT_EQ(read.maxThreadsPerBlock, passes::GpuLimits::mali().maxThreadsPerBlock);
  EXPECT_EQ(read.maxSharedMemoryPerBlock, passes::GpuLimits::mali().maxSharedMemoryPerBlock);
  EXPECT_EQ(read.maxBlockDimensions, passes::GpuLimits::mali().maxBlockDimensions);
  EXPECT_EQ(read.maxDynamicSharedMemoryPerBlock, 0);
  // A CUDA device's dynamic shared memory travels with the rest; a negative one is refused.
  rpc::proto::GpuParameters cuda;
  rpc::writeGpuParameters("cuda:0", passes::GpuLimits::cudaSm90(), &cuda);
  EXPECT_EQ(rpc::readGpuParameters(cuda, "server").maxDynamicSharedMemoryPerBlock, 227 * 1024);
  cuda.set_max_dynamic_shared_memory_per_block(-1);
  expectContains(errorOf([&] { rpc::readGpuParameters(cuda, "server"); }), "reports max_dynamic_shared_memory_per_block = -1");

  auto threads = validParameters();
  threads.set_max_threads_per_block(0);
  expectContains(errorOf([&] { rpc::readGpuParameters(threads, "the device server at h:1"); }),
                 "the device server at h:1 reports max_threads_per_block = 0 for its GPU opencl:0");
  auto dims = validParameters();
  dims.clear_max_block_dims();
  dims.add_max_block_dims(256);
  expectContains(errorOf([&] { rpc::readGpuParameters(dims, "server"); }), "reports 1 max_block_dims");
  auto units = validParameters();
  units.set_multi_processor_count(-3);
  expectContains(errorOf([&] { rpc::readGpuParameters(units, "server"); }), "multi_processor_count = -3");
}

TEST(GpuRpc, OpenclServerReportsItsLimitsAndMeasuresGpuCandidates) {
  TESSEL_REQUIRE_OPENCL();
  Cluster c;
  c.startTracker();
  c.startServer("pocl", {"--device", "opencl"});
  auto info = rpc::queryRemoteHardware(c.trackerAddress(), "pocl", {}, 10s);
  EXPECT_EQ(info.gpuDevice, "opencl:0");
  EXPECT_EQ(info.gpuLimits.maxThreadsPerBlock, runtime::openclDeviceInfo(0).maxThreadsPerBlock);

  auto task = tune::autotvm::makeGpuTuningTask("conv", ops::conv2dBiasReluNCHW(1, 8, 10, 10, 16, 3, 3, 1, 1), target::Target::parse("opencl"),
                                               info.gpuLimits);
  rpc::RpcRunnerOptions o;
  o.tracker = c.trackerAddress();
  o.key = "pocl";
  o.measure.checkCorrectness = true;
  o.measure.number = 2;
  rpc::RpcRunner runner(o);
  tune::LocalBuilder builder;
  std::vector<tune::MeasureInput> inputs;
  for (uint64_t i = 0; i < std::min<uint64_t>(3, task->space->size()); ++i)
    inputs.push_back({task->measure, task->instantiate(task->space->get(i)), ""});
  auto results = tune::measureBatch(builder, runner, inputs);
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok()) << r.errorMessage;
    EXPECT_EQ(r.costs.size(), 3u);
  }
}

TEST(GpuRpc, ServersRefuseCandidatesOfAnotherKind) {
  TESSEL_REQUIRE_OPENCL();
  Cluster c;
  c.startTracker();
  size_t gpu = c.startServer("pocl", {"--device", "opencl"});
  size_t cpu = c.startServer("cpu");
  rpc::RemoteKernel kernel;
  kernel.library = "k.manifest.json";
  kernel.kernel = "k";
  kernel.gpuCode = "k.cubin";
  kernel.gpuDevice = "cuda";
  {
    rpc::DeviceSession session(fmt::format("127.0.0.1:{}", c.serverPort(gpu)), {}, "test");
    session.upload("k.manifest.json", "{}");
    session.upload("k.cubin", "not a cubin");
    expectContains(errorOf([&] { session.measure(kernel, {}); }), "'gpu_device' is 'cuda', but this server measures on opencl:0");
    rpc::RemoteKernel cpuKernel = kernel;
    cpuKernel.gpuDevice.clear();
    cpuKernel.gpuCode.clear();
    expectContains(errorOf([&] { session.measure(cpuKernel, {}); }), "this server measures GPU candidates on opencl:0");
  }
  {
    rpc::DeviceSession session(fmt::format("127.0.0.1:{}", c.serverPort(cpu)), {}, "test");
    session.upload("k.manifest.json", "{}");
    session.upload("k.cubin", "not a cubin");
    expectContains(errorOf([&] { session.measure(kernel, {}); }), "this server measures CPU kernels");
  }
  auto bad = runSubprocess({tesselCli(), "server", "--device", "opencl:x", "--port", "0"}, {});
  EXPECT_FALSE(bad.ok());
  expectContains(bad.output, "--device opencl:x");
}

TEST(GpuRpc, Seed003FlowTunesResnet18ConvolutionsOnAnOpenclServer) {
  TESSEL_REQUIRE_OPENCL();
  Cluster c;
  c.startTracker();
  c.startServer("rk3399", {"--device", "opencl"});
  std::string log = c.dir() + "/rk3399.resnet-18.log";
  SubprocessOptions o;
  o.timeout = 180s;
  // At 32x32 (the seed's 224x224 has the same tasks, larger) and three of its convolutions: PoCL
  // compiles every candidate on this CPU (about 80 s for all twelve).
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "opencl -device=mali",
                          "--target-host", "cpu -mtriple=aarch64-linux-gnu", "--runner", "rpc", "--key", "rk3399", "--tracker",
                          c.trackerAddress(), "--ops", "conv2d", "--tasks", "1,2,4", "--winograd", "never", "--tuner", "xgb", "--n-trial", "2", "--batch-size", "2",
                          "--confirm-top", "0", "--number", "1", "--repeat", "1", "--evaluate-repeat", "3", "--log", log},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "Extract tasks...\n");
  expectContains(r.output, "gpu_default");
  expectContains(r.output, "conv2d_nchw.cuda");
  expectContains(r.output, "trials (--n-trial 2 per task, capped by its configs)...\n[Task  1/");
  expectContains(r.output, "Compile...\n");
  expectContains(r.output, "Evaluate inference time cost...\nUpload...\nMean inference time (std dev): ");
  auto records = tune::readRecords(log);
  ASSERT_FALSE(records.records.empty());
  // Each convolution is tuned twice: with the tiled template and with gpu_default, the
  // baseline the build's history best compares it with (direct convolutions only, as the seed's:
  // --winograd never).
  int ok = 0;
  std::set<std::string> templates;
  for (const auto& record : records.records) {
    EXPECT_EQ(record.target, "opencl -device=mali");
    templates.insert(record.task.templateName);
    ok += record.ok();
  }
  EXPECT_EQ(templates, (std::set<std::string>{"conv2d_nchw.cuda", "gpu_default"}));
  EXPECT_GT(ok, 0);

  // The records apply to a build of the same network (compile --records), and nonsense hosts are refused.
  std::string module = c.dir() + "/module";
  auto compiled = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--image-size", "32", "--target", "opencl -device=mali",
                                 "--target-host", "cpu -mtriple=aarch64-linux-gnu", "--records", log, "-o", module},
                                {});
  ASSERT_TRUE(compiled.ok()) << compiled.output;
  expectContains(compiled.output, "best records, else the default GPU schedule");
  EXPECT_TRUE(std::filesystem::exists(module + "/kernels.cl"));
  auto nonsense = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", "opencl", "--target-host", "mali", "-o",
                                 c.dir() + "/other"},
                                {});
  EXPECT_FALSE(nonsense.ok());
  expectContains(nonsense.output, "--target-host 'mali' with --target 'opencl': not a CPU target");
}

TEST(GpuRpc, Seed001FlowAutoSchedulesOnAnOpenclServer) {
  // Seed 001: the auto-scheduler for a Mali device behind the tracker, the kernels checked
  // against the remote device's limits, the records applied to the build timed there.
  TESSEL_REQUIRE_OPENCL();
  Cluster c;
  c.startTracker();
  c.startServer("rk3399", {"--device", "opencl"});
  std::string log = c.dir() + "/rk3399.auto.log";
  SubprocessOptions o;
  o.timeout = 180s;
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "opencl -device=mali",
                          "--target-host", "cpu -mtriple=aarch64-linux-gnu", "--runner", "rpc", "--key", "rk3399", "--tracker",
                          c.trackerAddress(), "--scheduler", "auto", "--tasks", "3", "--n-trial", "4", "--batch-size", "2",
                          "--number", "1", "--repeat", "1", "--evaluate-repeat", "2", "--log", log},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "kernels are verified against its limits");
  expectContains(r.output, "[ Task Scheduler ]");
  expectContains(r.output, "applied tuned records to 1 of");
  expectContains(r.output, "Evaluate inference time cost...\nUpload...\nMean inference time (std dev): ");
  int ok = 0;
  for (const auto& record : tune::readRecords(log).records) {
    EXPECT_EQ(record.target, "opencl -device=mali");
    EXPECT_FALSE(record.task.fromTemplate());
    ok += record.ok();
  }
  EXPECT_GE(ok, 3) << r.output;
}
