// GPU candidates through the tuning contract (tune/Measure.h): built by LocalBuilder into GPU
// modules (an invalid one is an error record), run by LocalRunner's worker on the device with
// its clock (a hanging kernel is a timeout, a wrong one a wrong answer, neither the end of the
// run), checked against the CPU reference; the gpu_default template and the tuning loop on
// them. OpenCL runs on PoCL here; CUDA candidates are compiled by NVRTC everywhere and run
// where a GPU is (`make test-gpu`).
#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/Nvrtc.h"
#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "ops/Examples.h"
#include "ops/GpuSchedules.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/Files.h"
#include "support/GpuModuleFormat.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/MeasureBatch.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/GpuDefaultTemplate.h"
#include "tune/autotvm/GpuTemplates.h"
#include "tune/autotvm/TuneTask.h"

using namespace tessel;
using tessel::testsupport::expectContains;

namespace {

/// conv2d + bias + relu, NCHW, 16 output channels (the channel tiles divide them).
te::ComputeDAG smallConv() { return ops::conv2dBiasReluNCHW(1, 8, 10, 10, 16, 3, 3, 1, 1); }

/// The convolution as gpu_default tunes it (every config of that space builds).
tune::autotvm::TuningTaskPtr convTask(const std::string& targetText) {
  const target::Target target = target::Target::parse(targetText);
  return tune::autotvm::makeGpuTuningTask("conv", smallConv(), target, passes::GpuLimits::forTarget(target),
                                          tune::autotvm::kGpuDefaultTemplate);
}

tune::MeasureInput fallbackCandidate(const tune::autotvm::TuningTaskPtr& task) {
  return {task->measure, task->instantiate(task->space->get(task->fallbackIndex)), "fallback"};
}

tune::LocalRunnerOptions checkedRunner() {
  tune::LocalRunnerOptions o;
  o.number = 2;
  o.repeat = 2;
  o.checkCorrectness = true;
  o.timeoutSeconds = 20;
  return o;
}

/// The OpenCL C of a built candidate with `statement` at the top of its kernel's body.
/// Puts `statement` first in the candidate's kernel, with `FIRST_BUFFER` in it replaced by the
/// name of the kernel's first buffer parameter.
void injectIntoKernel(const tune::BuildResult& build, std::string statement) {
  std::string path = build.libraryPath + "/" + kOpenclCodeFile;
  std::string code = readFile(path);
  size_t kernel = code.find("__kernel");
  ASSERT_NE(kernel, std::string::npos);
  size_t open = code.find("void ", kernel);
  open = code.find('(', open);
  size_t end = code.find_first_of(",)", open);
  std::string first = code.substr(open + 1, end - open - 1);
  first = first.substr(first.find_last_of(" *") + 1);
  for (size_t at; (at = statement.find("FIRST_BUFFER")) != std::string::npos;) statement.replace(at, 12, first);
  size_t body = code.find('{', kernel);
  code.insert(body + 1, "\n" + statement + "\n");
  writeFile(path, code);
}

}  // namespace

TEST(GpuTemplates, DefaultTemplateFallbackIsTheDefaultSchedule) {
  passes::GpuLimits limits = passes::GpuLimits::forTarget(target::Target::parse("opencl"));
  auto task = tune::autotvm::makeGpuTuningTask("conv", smallConv(), target::Target::parse("opencl"), limits, "gpu_default");
  EXPECT_EQ(task->templateName, "gpu_default");
  // The table's first row that applies: the tiled template for a direct NCHW convolution,
  // gpu_default for the rest.
  EXPECT_EQ(tune::autotvm::gpuTemplateFor(smallConv()).value_or(""), "conv2d_nchw.cuda");
  EXPECT_EQ(tune::autotvm::gpuTemplateFor(ops::matmul(8, 8, 8)).value_or(""), "gpu_default");
  ASSERT_TRUE(task->measure->gpuLimits.has_value());
  EXPECT_EQ(task->measure->gpuLimits->maxThreadsPerBlock, limits.maxThreadsPerBlock);
  auto rules = ops::gpuScheduleOptionsFor(limits.maxThreadsPerBlock, limits.multiProcessorCount, limits.warpSize);
  EXPECT_EQ(schedule::stepsToJson(task->instantiate(task->space->get(task->fallbackIndex))),
            schedule::stepsToJson(ops::defaultGpuSchedule(smallConv(), rules)));
  // Threads within the device's limit (256 for the OpenCL profile), every config a distinct
  // schedule along each knob.
  for (const auto& option : task->space->knob("threads_per_block").options) EXPECT_LE(option.get<int64_t>(), 256);
  EXPECT_GT(task->space->knob("channel_tile").options.size(), 1u);  // a direct convolution has channel tiles
  EXPECT_LE(task->space->size(), task->unprunedSize);
}

TEST(GpuTemplates, PrunesKnobsThatDoNotChangeTheSchedule) {
  // A matmul has no direct convolution: channel tiles change nothing and are pruned to the rule's
  // (8 rows: too thin for the GEMM tiles of batch_matmul.cuda, so gpu_default's).
  auto task = tune::autotvm::makeGpuTuningTask("dense", ops::matmul(8, 512, 128), target::Target::parse("cuda"), passes::GpuLimits::cudaSm90());
  EXPECT_EQ(task->templateName, "gpu_default");
  EXPECT_EQ(task->space->knob("channel_tile").options.size(), 1u);
  std::set<std::string> schedules;
  for (uint64_t i = 0; i < task->space->size(); ++i)
    schedules.insert(schedule::stepsToJson(task->instantiate(task->space->get(i))).dump());
  EXPECT_GT(schedules.size(), 1u);
}

TEST(GpuTemplates, UnknownTemplateAndCpuTargetAreErrors) {
  expectContains(testsupport::errorOf([] {
                   tune::autotvm::makeGpuTuningTask("conv", smallConv(), target::Target::parse("opencl"), passes::GpuLimits::forTarget(target::Target::parse("opencl")), "nope");
                 }),
                 "no GPU template 'nope' (templates: conv2d_nchw_winograd.cuda, conv2d_nchw.cuda, conv2d_nhwc.cuda, depthwise_conv2d_nchw.cuda, dense_small_batch.cuda, dense_large_batch.cuda, batch_matmul.cuda, gpu_default)");
  expectContains(testsupport::errorOf([] { tune::autotvm::makeGpuTuningTask("conv", smallConv(), target::Target::parse("cpu"), passes::GpuLimits{}); }),
                 "not a GPU target");
}

TEST(GpuMeasure, OpenclCandidateMeasuredAndCheckedOnTheDevice) {
  TESSEL_REQUIRE_OPENCL();
  auto task = convTask("opencl");
  tune::LocalBuilder builder;
  tune::LocalRunner runner(checkedRunner());
  auto results = tune::measureBatch(builder, runner, {fallbackCandidate(task)});
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(results[0].ok()) << results[0].errorMessage;
  EXPECT_EQ(results[0].costs.size(), 2u);
  for (double c : results[0].costs) EXPECT_GT(c, 0);
  EXPECT_GE(results[0].callsPerRepeat, 2);
}

TEST(GpuMeasure, KernelOverTheThreadLimitIsAnErrorRecord) {
  // Steps made for 1024 threads per block; the task's device allows 64.
  passes::GpuLimits small = passes::GpuLimits::forTarget(target::Target::parse("opencl"));
  small.maxThreadsPerBlock = 64;
  small.profile = "a 64-thread device";
  auto task = std::make_shared<tune::MeasureTask>(*tune::makeMeasureTask("conv", smallConv(), target::Target::parse("opencl")));
  task->gpuLimits = small;
  ops::GpuScheduleOptions wide;
  wide.threadsPerBlock = 1024;
  tune::LocalBuilder builder;
  auto builds = builder.build({{task, ops::defaultGpuSchedule(smallConv(), wide), "wide"}});
  ASSERT_EQ(builds.size(), 1u);
  EXPECT_EQ(builds[0].errorNo, tune::MeasureErrorNo::InstantiationError);
  expectContains(builds[0].errorMessage, "a 64-thread device");
}

TEST(GpuMeasure, HangingKernelTimesOutAndWrongKernelIsAWrongAnswer) {
  TESSEL_REQUIRE_OPENCL();
  auto task = convTask("opencl");
  tune::LocalBuilderOptions keep;
  keep.keepFiles = true;
  tune::LocalBuilder builder(keep);
  auto o = checkedRunner();
  o.timeoutSeconds = 5;  // the hang's cost; the driver's build of the others stays well inside it
  tune::LocalRunner runner(o);
  auto input = fallbackCandidate(task);
  auto builds = tune::buildBatch(builder, runner, {input, input, input});
  ASSERT_TRUE(builds[0].ok() && builds[1].ok() && builds[2].ok());
  // A loop of volatile stores to global memory: a side effect that no compiler may drop
  // (NVIDIA's OpenCL compiler dropped a spin on a volatile private variable, and the H200 then
  // ran the kernel to its right answer).
  injectIntoKernel(builds[0], "for (;;) ((volatile __global float*)FIRST_BUFFER)[0] += 1.0f;");
  injectIntoKernel(builds[1], "return;");  // writes nothing: the outputs keep their garbage
  auto results = runner.run({input, input, input}, builds);
  EXPECT_EQ(results[0].errorNo, tune::MeasureErrorNo::RunTimeoutError) << results[0].errorMessage;
  EXPECT_EQ(results[1].errorNo, tune::MeasureErrorNo::WrongAnswerError) << results[1].errorMessage;
  expectContains(results[1].errorMessage, "wrong answer");
  EXPECT_TRUE(results[2].ok()) << results[2].errorMessage;  // the run went on with a fresh worker
  EXPECT_GE(runner.workersStarted(), 2);
}

TEST(GpuMeasure, OpenclCodeTheDriverRejectsIsACompileDeviceError) {
  // OpenCL C is built by the driver when the worker loads the candidate: code it refuses is
  // the candidate's compile error (with the driver's log), not a failure of the device.
  TESSEL_REQUIRE_OPENCL();
  auto task = convTask("opencl");
  tune::LocalBuilderOptions keep;
  keep.keepFiles = true;
  tune::LocalBuilder builder(keep);
  tune::LocalRunner runner(checkedRunner());
  auto input = fallbackCandidate(task);
  auto builds = tune::buildBatch(builder, runner, {input, input});
  ASSERT_TRUE(builds[0].ok() && builds[1].ok());
  injectIntoKernel(builds[0], "this_is_not_declared = 1;");
  auto results = runner.run({input, input}, builds);
  EXPECT_EQ(results[0].errorNo, tune::MeasureErrorNo::CompileDeviceError) << results[0].errorMessage;
  expectContains(results[0].errorMessage, "could not build the kernels");
  expectContains(results[0].errorMessage, "this_is_not_declared");
  EXPECT_TRUE(results[1].ok()) << results[1].errorMessage;
}

TEST(GpuMeasure, TuningLoopTunesAnOpenclTask) {
  TESSEL_REQUIRE_OPENCL();
  auto task = convTask("opencl");
  tune::LocalBuilder builder;
  tune::LocalRunner runner(checkedRunner());
  tune::autotvm::RandomTuner tuner(task, 3);
  tune::autotvm::TuneTaskOptions o;
  o.nTrial = 4;
  o.batchSize = 2;
  o.confirmTop = 0;
  int ok = 0, logged = 0;
  auto result = tune::autotvm::tuneTask(task, tuner, builder, runner, o, {},
                                        [&](const tune::autotvm::ConfigEntity&, const tune::MeasureInput&, const tune::MeasureResult& r) {
                                          ++logged;
                                          ok += r.ok();
                                        });
  int64_t expected = std::min<int64_t>(4, int64_t(task->space->size()));
  EXPECT_EQ(result.trials, expected);
  EXPECT_EQ(logged, expected);
  EXPECT_EQ(ok, expected);
  EXPECT_GT(result.bestFlopsPerSecond, 0);
}

TEST(GpuMeasure, CudaCandidateCompiledByNvrtcAndRunWhereAGpuIs) {
  std::string why;
  if (!codegen::nvrtcAvailable(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  auto task = convTask("cuda -arch=sm_90");
  tune::LocalBuilderOptions keep;
  keep.keepFiles = true;
  tune::LocalBuilder builder(keep);
  auto builds = builder.build({fallbackCandidate(task)});
  ASSERT_TRUE(builds[0].ok()) << builds[0].errorMessage;
  EXPECT_EQ(builds[0].gpuDevice, "cuda");
  EXPECT_TRUE(std::filesystem::exists(builds[0].libraryPath + "/" + kCudaCodeFile));
  EXPECT_GT(builds[0].compileSeconds, 0);
  // NVRTC rejects what it cannot compile (here an architecture it does not know): the
  // candidate's CompileDeviceError with NVRTC's message, not the end of the batch.
  auto old = std::make_shared<tune::MeasureTask>(*task->measure);
  old->target = target::Target::parse("cuda -arch=sm_12");
  auto rejected = builder.build({{old, fallbackCandidate(task).steps, "sm_12"}, fallbackCandidate(task)});
  EXPECT_EQ(rejected[0].errorNo, tune::MeasureErrorNo::CompileDeviceError) << rejected[0].errorMessage;
  expectContains(rejected[0].errorMessage, "sm_12");
  EXPECT_TRUE(rejected[1].ok()) << rejected[1].errorMessage;
  TESSEL_REQUIRE_CUDA();
  tune::LocalRunner runner(checkedRunner());
  auto results = tune::measureBatch(builder, runner, {fallbackCandidate(task)});
  ASSERT_TRUE(results[0].ok()) << results[0].errorMessage;
}
