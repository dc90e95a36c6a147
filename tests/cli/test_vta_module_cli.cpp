// Seed 004 through the real binary: `tessel compile --model resnet-18 --target vta` then
// `tessel run` on the simulator (host functions compiled for the CPU, the packed convolutions
// the VTA programs stored in the module, in their calls' place), and the deployment example
// (runtime and VTA device support only) on the same module. The prediction equals the CPU int8 reference — the same
// module with its packed convolutions run by their CPU kernels — bit for bit, and the
// interpreter's to float rounding; gemm_counter is seed 004's 6623232; tuned records change the
// tilings (and the cycles) but not one bit of the result; bad module files are refused naming
// the problem.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "tune/RecordLog.h"
#include "vta/DensePackedTemplate.h"
#include "vta/GraphPacking.h"
#include "vta/Simulator.h"
#include "vta/VtaMeasurement.h"

using tessel::testsupport::runTessel;

using namespace tessel;
using testsupport::expectContains;

TEST(VtaModuleCli, Seed004OnTheSimulatorIsBitExactWithTheCpuInt8Reference) {
  TempDir dir;
  auto image = runtime::Tensor::empty({1, 3, 224, 224}, DataType::float32());
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  runtime::saveNpy(image, dir.path() + "/image.npy");

  // Default tilings.
  auto compiled = runTessel({"compile", "--model", "resnet-18", "--target", "vta", "--target-host", "cpu", "-o", dir.path() + "/module",
                             "--no-shipped-records"});
  ASSERT_TRUE(compiled.ok()) << compiled.output;
  expectContains(compiled.output, "19 packed convolution groups in 10 tasks, 0 with a tuned record");
  auto ran = runTessel({"run", dir.path() + "/module", "--input", dir.path() + "/image.npy", "--output", dir.path() + "/out.npy"});
  ASSERT_TRUE(ran.ok()) << ran.output;
  expectContains(ran.output, "Execution statistics:\n\tinp_load_nbytes :");
  expectContains(ran.output, "\tgemm_counter    :          6623232\n");
  expectContains(ran.output, "Mean inference time (std dev): ");

  expectContains(ran.output, "host functions on the CPU");
  // The CPU int8 reference: the module's graph with every call on its CPU kernel.
  auto cpu = runtime::GraphExecutor::load(dir.path() + "/module");
  cpu.setInput(0, image);
  cpu.run();
  runtime::Tensor want = cpu.getOutput(0);
  runtime::Tensor got = runtime::loadNpy(dir.path() + "/out.npy");
  ASSERT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.nbytes()));
  // The deployment example, linked against the runtime and the VTA device support alone, runs
  // the module from its stored programs: the same bits and seed 004's gemm_counter.
  auto deployed = runSubprocess({TESSEL_DEPLOY_VTA_EXAMPLE, dir.path() + "/module", dir.path() + "/image.npy", dir.path() + "/deployed.npy"});
  ASSERT_TRUE(deployed.ok()) << deployed.output;
  expectContains(deployed.output, "19 calls on VTA");
  expectContains(deployed.output, "\tgemm_counter    :          6623232\n");
  runtime::Tensor deployedOut = runtime::loadNpy(dir.path() + "/deployed.npy");
  EXPECT_EQ(0, std::memcmp(deployedOut.data(), want.data(), want.nbytes()));
  // The interpreter (double precision in the float operators after the packed region).
  graph::registerStandardOps();
  graph::Graph packed = vta::prepareForVta(graph::buildModel("resnet-18", {}), vta::HardwareConfig{});
  runtime::Tensor interpreted = graph::interpretGraph(packed, {{"data", image}})[0];
  for (int64_t i = 0; i < got.numel(); ++i) ASSERT_NEAR(got.dataAs<float>()[i], interpreted.dataAs<float>()[i], 1e-5) << i;

  // With records: a short tuning run on this machine's simulator, then compile with its log.
  std::string log = dir.path() + "/vta.log";
  auto tuned = runTessel({"tune", "--model", "resnet-18", "--target", "vta", "--tuner", "random", "--n-trial", "8", "--tasks", "1,10",
                       "--log", log, "--no-evaluate"});
  ASSERT_TRUE(tuned.ok()) << tuned.output;
  auto withRecords = runTessel({"compile", "--model", "resnet-18", "--target", "vta", "-o", dir.path() + "/tuned", "--records", log});
  ASSERT_TRUE(withRecords.ok()) << withRecords.output;
  expectContains(withRecords.output, "10 with a tuned record (2 from " + log + ", 8 shipped with tessel)");
  auto again = runTessel({"run", dir.path() + "/tuned", "--input", dir.path() + "/image.npy", "--output", dir.path() + "/tuned.npy",
                       "--profile"});
  ASSERT_TRUE(again.ok()) << again.output;
  // Groups whose own epilogue needs more accumulator room than the task's keep the default.
  expectContains(again.output, " with a tuned tiling, ");
  EXPECT_EQ(again.output.find("on VTA: 0 with a tuned tiling"), std::string::npos) << again.output;
  expectContains(again.output, "GEMM%");
  expectContains(again.output, "\tgemm_counter    :          6623232\n");
  runtime::Tensor tunedOut = runtime::loadNpy(dir.path() + "/tuned.npy");
  EXPECT_EQ(0, std::memcmp(tunedOut.data(), want.data(), want.nbytes()));

  // tessel classify on the simulator: seed 004's statistics, then the classes.
  ASSERT_TRUE(runSubprocess({"convert", "-size", "64x48", "plasma:fractal", dir.path() + "/cat.png"}).ok());
  auto classified = runTessel({"classify", dir.path() + "/tuned", dir.path() + "/cat.png"});
  ASSERT_TRUE(classified.ok()) << classified.output;
  expectContains(classified.output, "\tgemm_counter    :          6623232\n");
  expectContains(classified.output, "resized to the module's input [1, 3, 224, 224]; top-5");

  // A damaged program file is refused, naming it.
  std::string programs = readFile(dir.path() + "/module/vta_programs.json");
  writeFile(dir.path() + "/module/vta_programs.json", programs.substr(0, programs.size() - 100));
  auto truncated = runTessel({"run", dir.path() + "/module"});
  EXPECT_FALSE(truncated.ok());
  expectContains(truncated.output, "vta_programs.json");
  // A damaged module file is refused, naming the file.
  writeFile(dir.path() + "/module/vta_module.json", "{\"format\": \"something else\"}");
  auto broken = runTessel({"run", dir.path() + "/module"});
  EXPECT_FALSE(broken.ok());
  expectContains(broken.output, "vta_module.json");
}

// `tessel tune --target vta --ops dense`: resnet-18's classifier as a dense_packed task (the
// seeds keep it on the CPU and tune conv2d only), every trial logged with the modelled time of
// its config's program (recomputed here) or refused with its reason; numbered after the ten
// convolutions with --ops conv2d,dense; an operator VTA does not tune is refused.
TEST(VtaModuleCli, DenseTasksAreTunedWithOpsDense) {
  TempDir dir("tessel-vta-dense-cli");
  std::string log = dir.path() + "/dense.log";
  auto tuned = runTessel({"tune", "--model", "resnet-18", "--target", "vta", "--ops", "dense", "--tuner", "random", "--n-trial", "12",
                          "--log", log, "--no-evaluate"});
  ASSERT_TRUE(tuned.ok()) << tuned.output;
  expectContains(tuned.output, "Extracted 1 dense tasks:\n(1, 512, 1008)\n");
  EXPECT_EQ(tuned.output.find("conv2d tasks"), std::string::npos) << tuned.output;
  vta::HardwareConfig config;
  vta::DensePackedProblem problem = vta::densePackedTaskProblem(vta::DenseWorkload{1, 32, 63}, config);
  auto task = vta::makeDensePackedTask(vta::densePackedTaskName(problem.workload, config), problem);
  auto records = tune::readRecords(log).records;
  ASSERT_EQ(records.size(), 12u);
  int valid = 0;
  for (const auto& r : records) {
    EXPECT_EQ(r.task.workloadKey, task->measure->workloadKey);
    ASSERT_TRUE(r.config.has_value());
    vta::DenseTiling tiling = vta::densePackedTiling(task->space->get(uint64_t(r.config->index)), problem.group);
    auto reason = vta::denseTilingProblem(problem.workload, tiling, problem.group, config);
    EXPECT_EQ(r.ok(), !reason.has_value()) << r.result.errorMessage;
    if (reason) {
      expectContains(r.result.errorMessage, *reason);
      continue;
    }
    ++valid;
    vta::Simulator simulator;
    vta::densePackedProgram(problem, tiling).runOn(simulator);
    EXPECT_DOUBLE_EQ(r.cost(), simulator.lastRunSeconds());
  }
  EXPECT_GT(valid, 0);
  auto both = runTessel({"tune", "--model", "resnet-18", "--target", "vta", "--ops", "conv2d,dense", "--tasks", "11", "--n-trial",
                         "2", "--log", dir.path() + "/both.log", "--no-evaluate"});
  ASSERT_TRUE(both.ok()) << both.output;
  expectContains(both.output, "Extracted 10 conv2d tasks:");
  expectContains(both.output, "Extracted 1 dense tasks:");
  expectContains(both.output, "Tuned 1 tasks: 2 trials");
  auto refused = runTessel({"tune", "--model", "resnet-18", "--target", "vta", "--ops", "depthwise_conv2d", "--log",
                            dir.path() + "/x.log", "--no-evaluate"});
  EXPECT_FALSE(refused.ok());
  expectContains(refused.output, "--target vta tunes conv2d and dense");
}
