// A VTA module that the runtime with the VTA device support runs alone: resnet-18 at 32x32,
// quantized and packed, built into a module directory with its packed convolution groups' VTA
// programs (vta/ModuleBuilder.h), then loaded by vta::loadVtaModuleExecutor — no graph, no
// compiler — on the simulator device. Its outputs equal the same module run with every call on
// its CPU kernel (the CPU int8 reference) bit for bit, run after run; gemm_counter is the
// groups' MACs / 256; the deployment example (linked against tessel_runtime and tessel_vta
// only) gives the same. Damaged program files and a module for another configuration are
// refused naming the file, the call and the problem. A packed dense group's stored program runs
// the same way.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "common/ErrorText.h"
#include "graph/Interpreter.h"
#include "runtime/Npy.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "vta/ModuleBuilder.h"
#include "PackedResnet18.h"
#include "vta/VtaDeviceApi.h"

using namespace tessel;
using namespace tessel::vta;
using namespace tessel::testsupport;

namespace {

runtime::Tensor randomImage(int64_t size, uint32_t seed) {
  auto image = runtime::Tensor::empty({1, 3, size, size}, DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  return image;
}

void expectErrorContaining(const std::function<void()>& body, const std::vector<std::string>& parts) {
  std::string message = errorOf(body);
  for (const std::string& part : parts) expectContains(message, part);
}

bool sameBytes(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

/// One module for every test (building it compiles the host functions).
class StoredVtaModule : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("tessel-vta-module-test");
    packed_ = new graph::Graph(packedResnet18(32));
    buildVtaModule(*packed_, HardwareConfig{}, {}, module());
  }
  static void TearDownTestSuite() {
    delete packed_;
    delete dir_;
  }
  void SetUp() override { registerVtaSimulatorDevice(); }
  static std::string module() { return dir_->path() + "/module"; }
  /// A copy of the module whose vta_programs.json is `edit`ed.
  static std::string withPrograms(const std::function<void(nlohmann::json&)>& edit) {
    static int copies = 0;
    std::string copy = dir_->path() + "/copy" + std::to_string(copies++);
    std::filesystem::copy(module(), copy);
    nlohmann::json programs = nlohmann::json::parse(readFile(copy + "/" + kModuleProgramsFile));
    edit(programs);
    writeFile(copy + "/" + kModuleProgramsFile, programs.dump());
    return copy;
  }
  static runtime::Tensor cpuReference(const runtime::Tensor& image) {
    auto cpu = runtime::GraphExecutor::load(module());
    cpu.setInput(0, image);
    cpu.run();
    return cpu.getOutput(0);
  }

  static TempDir* dir_;
  static graph::Graph* packed_;
};
TempDir* StoredVtaModule::dir_ = nullptr;
graph::Graph* StoredVtaModule::packed_ = nullptr;

}  // namespace

TEST_F(StoredVtaModule, RunsFromTheStoredProgramsBitExactWithTheCpuInt8Reference) {
  VtaModuleExecutor loaded = loadVtaModuleExecutor(module());
  ASSERT_NE(loaded.runner, nullptr);
  // Every packed convolution group of the network has its program.
  size_t groups = 0;
  uint64_t gemms = 0;
  for (const graph::FusedGroup& g : graph::fuseOperators(*packed_))
    if (int convolution = packedConvolutionOf(*packed_, g); convolution >= 0) {
      ++groups;
      gemms += uint64_t(Conv2dWorkload::of(*packed_, convolution).gemmCount());
    }
  EXPECT_EQ(groups, 19u);
  EXPECT_EQ(loaded.runner->programs().calls.size(), groups);
  for (uint32_t seed : {1u, 2u}) {
    runtime::Tensor image = randomImage(32, seed);
    loaded.runner->simulator().clearStats();
    loaded.executor.setInput(0, image);
    loaded.executor.run();
    EXPECT_TRUE(sameBytes(loaded.executor.getOutput(0), cpuReference(image))) << "image " << seed;
    // Constants are uploaded once; the second run must still compute with them.
    EXPECT_EQ(loaded.runner->simulator().stats().gemmCounter, gemms);
    for (const VtaCallRun& run : loaded.runner->lastRuns()) EXPECT_GT(run.cycles, 0u) << run.name;
  }
  // The profile rows carry each program's tiling and GEMM count.
  std::vector<VtaGroupRun> rows = moduleGroupRuns(loaded.runner->programs(), loaded.runner->lastRuns());
  ASSERT_EQ(rows.size(), groups);
  uint64_t rowGemms = 0;
  for (const VtaGroupRun& r : rows) rowGemms += r.gemms;
  EXPECT_EQ(rowGemms, gemms);
}

TEST_F(StoredVtaModule, AModuleWithoutProgramsLoadsAsAPlainModule) {
  TempDir plain;
  std::filesystem::copy(module(), plain.path() + "/m");
  std::filesystem::remove(plain.path() + "/m/" + kModuleProgramsFile);
  EXPECT_EQ(loadVtaModuleExecutor(plain.path() + "/m").runner, nullptr);
}

TEST_F(StoredVtaModule, RefusesAModuleForAnotherConfiguration) {
  HardwareConfig other;
  other.logMicroOpBufferSize = 14;
  registerVtaSimulatorDevice(other);
  expectErrorContaining([&] { loadVtaModuleExecutor(module()); },
                        {kModuleProgramsFile, "built for " + HardwareConfig{}.modelName(), other.modelName()});
}

TEST_F(StoredVtaModule, RefusesDamagedProgramFilesNamingTheProblem) {
  std::string text = readFile(module() + "/" + kModuleProgramsFile);
  std::string truncated = dir_->path() + "/truncated";
  std::filesystem::copy(module(), truncated);
  writeFile(truncated + "/" + kModuleProgramsFile, text.substr(0, text.size() / 2));
  expectErrorContaining([&] { loadVtaModuleExecutor(truncated); }, {kModuleProgramsFile, "not valid JSON"});

  // A call the executor does not have.
  expectErrorContaining([&] { loadVtaModuleExecutor(withPrograms([](nlohmann::json& p) { p["calls"][0]["call"] = 9999; })); },
                        {kModuleProgramsFile, "call 9999", "past the module's"});
  // Micro-op kernels missing: their loads reach memory in no segment.
  expectErrorContaining(
      [&] {
        loadVtaModuleExecutor(withPrograms([](nlohmann::json& p) {
          nlohmann::json& call = p["calls"][0];
          std::map<int64_t, int64_t> renumbered;  // argument segments by their old index
          for (const auto& a : call["arguments"]) renumbered[a["segment"].get<int64_t>()] = 0;
          nlohmann::json kept = nlohmann::json::array();
          for (auto& [old, now] : renumbered) {
            now = int64_t(kept.size());
            kept.push_back(call["program"]["memory"][size_t(old)]);
          }
          ASSERT_LT(kept.size(), call["program"]["memory"].size());  // there was a private segment
          call["program"]["memory"] = kept;
          for (auto& a : call["arguments"]) a["segment"] = renumbered[a["segment"].get<int64_t>()];
        }));
      },
      {kModuleProgramsFile, "call ", "in none of the program's segments", "LOAD"});
  // An argument naming no segment, and one that would not fit its segment.
  expectErrorContaining(
      [&] { loadVtaModuleExecutor(withPrograms([](nlohmann::json& p) { p["calls"][1]["arguments"][0]["segment"] = 99; })); },
      {kModuleProgramsFile, "calls[1]", "segment 99"});
  expectErrorContaining(
      [&] { loadVtaModuleExecutor(withPrograms([](nlohmann::json& p) { p["calls"][1]["arguments"][0]["bytes"] = 1ll << 40; })); },
      {kModuleProgramsFile, "calls[1]", "bytes in a segment of"});
  // A program for another configuration inside the file.
  expectErrorContaining(
      [&] {
        loadVtaModuleExecutor(
            withPrograms([](nlohmann::json& p) { p["calls"][2]["program"]["config"]["LOG_UOP_BUFF_SIZE"] = 14; }));
      },
      {kModuleProgramsFile, "calls[2]", "built for"});
  // The output marked as a parameter.
  expectErrorContaining(
      [&] { loadVtaModuleExecutor(withPrograms([](nlohmann::json& p) { p["calls"][0]["arguments"].back()["constant"] = true; })); },
      {kModuleProgramsFile, "output"});
}

#ifdef TESSEL_DEPLOY_VTA_EXAMPLE
TEST_F(StoredVtaModule, TheDeploymentExampleLinkedWithoutACompilerRunsIt) {
  runtime::Tensor image = randomImage(32, 7);
  runtime::saveNpy(image, dir_->path() + "/image.npy");
  auto ran = runSubprocess({TESSEL_DEPLOY_VTA_EXAMPLE, module(), dir_->path() + "/image.npy", dir_->path() + "/out.npy"});
  ASSERT_TRUE(ran.ok()) << ran.output;
  expectContains(ran.output, "19 calls on VTA");
  expectContains(ran.output, "gemm_counter");
  EXPECT_TRUE(sameBytes(runtime::loadNpy(dir_->path() + "/out.npy"), cpuReference(image)));
  // Another configuration for the device: refused, naming the file.
  HardwareConfig other;
  other.logMicroOpBufferSize = 14;
  writeFile(dir_->path() + "/other.json", other.toJson().dump());
  auto refused = runSubprocess({TESSEL_DEPLOY_VTA_EXAMPLE, module(), dir_->path() + "/image.npy", dir_->path() + "/o.npy",
                                dir_->path() + "/other.json"});
  EXPECT_FALSE(refused.ok());
  expectContains(refused.output, kModuleProgramsFile);
  expectContains(refused.output, "built for");
}
#endif

// A packed dense group (dense_packed) in a module: its program stored beside the convolutions',
// run by the runtime alone, bit-exact with the same module on its CPU kernels and with the
// interpreter; a CPU function after it reads its result.
TEST(StoredVtaModuleDense, APackedDenseRunsFromItsStoredProgram) {
  registerVtaSimulatorDevice();
  graph::registerStandardOps();
  graph::Graph g;
  int data = g.addInput("data", {{2, 4, 1, 16}, DataType::int8()});
  auto weight = runtime::Tensor::empty({5, 4, 16, 16}, DataType::int8());
  auto bias = runtime::Tensor::empty({5, 1, 16}, DataType::int32());
  for (int64_t i = 0; i < weight.numel(); ++i) weight.dataAs<int8_t>()[i] = int8_t(i * 37 % 61 - 30);
  for (int64_t i = 0; i < bias.numel(); ++i) bias.dataAs<int32_t>()[i] = int32_t(i * 131 % 4001) - 2000;
  int dense = g.addOp("dense_blocked", {data, g.addConstant("weight", std::move(weight))}, {{"out_dtype", "int32"}}, "fc");
  int biased = g.addOp("add", {dense, g.addConstant("bias", std::move(bias))}, nlohmann::json::object(), "fc_bias");
  int shifted = g.addOp("right_shift", {biased}, {{"bits", 6}}, "fc_shift");
  int clipped = g.addOp("clip", {shifted}, {{"min", -127.0}, {"max", 127.0}}, "fc_clip");
  int narrow = g.addOp("cast", {clipped}, {{"dtype", "int8"}}, "fc_int8");
  // A pooling after it is a host function of its own (elementwise operators would fuse into
  // the dense's group).
  g.markOutput(g.addOp("max_pool2d", {narrow}, {{"kernel", {1, 2}}, {"strides", {1, 2}}, {"layout", "NCHW"}}, "pooled"));
  TempDir dir("tessel-vta-dense-module");
  buildVtaModule(g, HardwareConfig{}, {}, dir.path() + "/module");
  VtaModuleExecutor loaded = loadVtaModuleExecutor(dir.path() + "/module");
  ASSERT_NE(loaded.runner, nullptr);
  ASSERT_EQ(loaded.runner->programs().calls.size(), 1u);
  EXPECT_EQ(loaded.runner->programs().calls[0].description.value("operator", ""), "dense_packed");
  auto input = runtime::Tensor::empty({2, 4, 1, 16}, DataType::int8());
  for (int64_t i = 0; i < input.numel(); ++i) input.dataAs<int8_t>()[i] = int8_t(i * 73 % 255 - 127);
  loaded.executor.setInput(0, input);
  loaded.executor.run();
  EXPECT_EQ(loaded.runner->simulator().stats().gemmCounter, uint64_t(2 * 4 * 5));
  auto cpu = runtime::GraphExecutor::load(dir.path() + "/module");
  cpu.setInput(0, input);
  cpu.run();
  EXPECT_TRUE(sameBytes(loaded.executor.getOutput(0), cpu.getOutput(0)));
  EXPECT_TRUE(sameBytes(loaded.executor.getOutput(0), graph::interpretGraph(g, {{"data", input}})[0]));
}
