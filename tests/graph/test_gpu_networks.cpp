// Whole networks on a GPU device: zoo networks at small image sizes (and a softmax head)
// built for OpenCL with the default GPU schedule, run by the graph executor on the first
// OpenCL device (PoCL here) and compared with the reference interpreter; the same networks
// built for CUDA (NVRTC compiles every kernel here) and, where a GPU is, run with and without
// the CUDA graph. Also the device checks of loading and the limits a build takes from a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "graph/Build.h"
#include "graph/GraphTestSupport.h"
#include "graph/GpuTargetLimits.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "graph/Fusion.h"
#include "ops/GpuAttentionTiles.h"
#include "runtime/CudaDevice.h"
#include "runtime/GraphExecutor.h"
#include "runtime/OpenclDevice.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

runtime::Tensor randomTensor(std::vector<int64_t> shape, uint32_t seed) { return graph::testsupport::randomTensor(std::move(shape), seed, 1.0f); }

/// The largest difference relative to the reference's largest magnitude.
double relativeError(const runtime::Tensor& got, const runtime::Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  double scale = 1e-12, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, double(std::fabs(want.dataAs<float>()[i])));
  for (int64_t i = 0; i < want.numel() && i < got.numel(); ++i)
    worst = std::max(worst, std::fabs(double(got.dataAs<float>()[i]) - want.dataAs<float>()[i]) / scale);
  return worst;
}

struct Network {
  std::string name;
  Graph graph;  ///< after the standard passes, as compile --target cuda|opencl prepares it
};

Graph prepared(const std::string& model, int64_t imageSize, std::optional<ops::Layout> layout) {
  ModelOptions zoo;
  zoo.imageSize = imageSize;
  zoo.classes = 10;
  OptimizeOptions passes;
  passes.desiredLayout = layout;
  passes.fuseSeparable = false;
  return optimizeGraph(buildModel(model, zoo), passes);
}

/// dense -> bias -> softmax: the operator classes the zoo's classifiers do not end with.
Graph softmaxHead() {
  registerStandardOps();
  Graph g;
  int x = g.addInput("x", {{2, 40}, DataType::float32()});
  int w = g.addConstant("w", randomTensor({30, 40}, 5));
  int b = g.addConstant("b", randomTensor({30}, 6));
  int logits = g.addOp("bias_add", {g.addOp("dense", {x, w}), b}, {{"axis", 1}});
  g.markOutput(g.addOp("softmax", {logits}));
  return g;
}

/// A transformer encoder block as BERT's default export becomes: an embedding lookup of run-time
/// token ids, layer norms, projections as batched products with a broadcast weight, two heads of
/// attention with the exporter's NaN guard after the softmax, a GELU feed-forward, residual adds
/// and a mean over the tokens.
Graph transformerBlock() {
  registerStandardOps();
  Graph g;
  const int64_t tokens = 8, hidden = 16, heads = 2, headSize = 8;
  uint32_t seed = 20;
  auto weight = [&](std::vector<int64_t> shape) {
    uint32_t s = seed++;
    return g.addConstant("w" + std::to_string(s), randomTensor(shape, s));
  };
  auto layerNorm = [&](int x) {
    return g.addOp("layer_norm", {x, weight({hidden}), weight({hidden})}, {{"axis", -1}, {"epsilon", 1e-5}});
  };
  int ids = g.addInput("ids", {{1, tokens}, DataType::int64()});
  int x = g.addOp("take", {weight({50, hidden}), ids}, {{"axis", 0}});
  int h = layerNorm(x);
  auto split = [&](int t, std::vector<int> axes) {
    int r = g.addOp("reshape", {g.addOp("batch_matmul", {t, weight({hidden, hidden})})}, {{"shape", {1, tokens, heads, headSize}}});
    return g.addOp("transpose", {r}, {{"axes", axes}});
  };
  int q = split(h, {0, 2, 1, 3}), kT = split(h, {0, 2, 3, 1}), v = split(h, {0, 2, 1, 3});
  auto scale = runtime::Tensor::empty({1}, DataType::float32());
  scale.dataAs<float>()[0] = 1.0f / std::sqrt(float(headSize));
  int scores = g.addOp("multiply", {g.addOp("batch_matmul", {q, kT}), g.addConstant("scale", scale)});
  int p = g.addOp("softmax", {scores}, {{"axis", -1}});
  auto zero = runtime::Tensor::empty({1}, DataType::float32());
  zero.dataAs<float>()[0] = 0;
  p = g.addOp("where", {g.addOp("is_nan", {p}), g.addConstant("zero", zero), p});
  int context = g.addOp("transpose", {g.addOp("batch_matmul", {p, v})}, {{"axes", {0, 2, 1, 3}}});
  int y = g.addOp("add", {g.addOp("reshape", {context}, {{"shape", {1, tokens, hidden}}}), x});
  int up = g.addOp("gelu", {g.addOp("batch_matmul", {layerNorm(y), weight({hidden, 2 * hidden})})});
  int out = g.addOp("add", {g.addOp("batch_matmul", {up, weight({2 * hidden, hidden})}), y});
  g.markOutput(out);
  g.markOutput(g.addOp("mean", {out}, {{"axis", {1}}}));
  return g;
}

/// A masked attention block as GPT-2 writes it (scale, causal where, softmax, context) over 7
/// tokens (a prime: fused, a block per query row), its heads read from one [1, 7, 24] projection.
Graph maskedAttention() {
  registerStandardOps();
  Graph g;
  const int64_t tokens = 7, heads = 2, headSize = 4;
  int x = g.addInput("x", {{1, tokens, 3 * heads * headSize}, DataType::float32()});
  auto head = [&](int64_t offset, std::vector<int64_t> axes) {
    int slice = g.addOp("strided_slice", {x}, {{"begin", {0, 0, offset}}, {"shape", {1, tokens, heads * headSize}}, {"step", {1, 1, 1}}});
    return g.addOp("transpose", {g.addOp("reshape", {slice}, {{"shape", {1, tokens, heads, headSize}}})}, {{"axes", axes}});
  };
  int q = head(0, {0, 2, 1, 3}), kT = head(heads * headSize, {0, 2, 3, 1}), v = head(2 * heads * headSize, {0, 2, 1, 3});
  auto scalar = [&](float value) {
    auto t = runtime::Tensor::empty({}, DataType::float32());
    t.dataAs<float>()[0] = value;
    return g.addConstant("c" + std::to_string(value), t);
  };
  auto causal = runtime::Tensor::empty({1, 1, tokens, tokens}, DataType::boolean());
  for (int64_t i = 0; i < tokens; ++i)
    for (int64_t j = 0; j < tokens; ++j) causal.dataAs<bool>()[i * tokens + j] = j <= i;
  int scaled = g.addOp("divide", {g.addOp("batch_matmul", {q, kT}), scalar(2.0f)});
  int masked = g.addOp("where", {g.addConstant("causal", causal), scaled, scalar(-3.4e38f)});
  g.markOutput(g.addOp("batch_matmul", {g.addOp("softmax", {masked}, {{"axis", 3}}), v}));
  return g;
}

/// Every operator class of the zoo: convolutions in both layouts (plain, strided, 1x1,
/// depthwise), folded batch norms as epilogues with relu/relu6 and residual adds, max and
/// average pooling, concatenation (squeezenet), flatten, dense and softmax; and a transformer
/// block's.
std::vector<Network> networks() {
  return {
      {"resnet-18 32x32 NCHW", prepared("resnet-18", 32, ops::Layout::NCHW)},
      {"mobilenet-v2 32x32 NHWC", prepared("mobilenet-v2", 32, ops::Layout::NHWC)},
      {"squeezenet_v1.1 33x33 NCHW", prepared("squeezenet_v1.1", 33, ops::Layout::NCHW)},
      {"dense + softmax", softmaxHead()},
      {"transformer block", transformerBlock()},
      // Every projection as partial products over halves (quarters of the feed-forward's
      // contraction) of its reduction and their sum, with the residual add as its epilogue.
      {"transformer block, reductions split",
       applyReductionSplits(transformerBlock(),
                            [](const Graph& g, int id) { return g.node(g.node(id).inputs[1]).type.shape[0] == 32 ? int64_t(4) : int64_t(2); })},
      // As GPU builds prepare it: the heads split and the row slices of the split products
      // computed in the products' operand copies (the key's transposed).
      {"transformer block, reductions split, layouts in the products",
       fuseLayoutsIntoProducts(applyReductionSplits(transformerBlock(), [](const Graph&, int) { return int64_t(2); }))},
      // --fuse-attention auto: the scores, scale, mask and softmax in the context's function.
      {"masked attention, fused", fuseAttention(fuseLayoutsIntoProducts(maskedAttention()))},
  };
}

/// Random floats, and token ids (int64) of an embedding table of 50 rows.
std::map<std::string, runtime::Tensor> inputsOf(const Graph& g) {
  std::map<std::string, runtime::Tensor> inputs;
  for (int id : g.inputIds()) {
    const TensorType& type = g.node(id).type;
    if (type.dtype != DataType::int64()) {
      inputs[g.node(id).name] = randomTensor(type.shape, uint32_t(id + 1));
      continue;
    }
    auto ids = runtime::Tensor::empty(type.shape, type.dtype);
    for (int64_t i = 0; i < ids.numel(); ++i) ids.dataAs<int64_t>()[i] = (i * 7 + 3) % 50;
    inputs[g.node(id).name] = ids;
  }
  return inputs;
}

std::vector<runtime::Tensor> runOnDevice(const std::string& directory, const runtime::GraphExecutorOptions& options,
                                         const std::map<std::string, runtime::Tensor>& inputs) {
  auto executor = runtime::GraphExecutor::load(directory, options);
  for (const auto& [name, value] : inputs) executor.setInput(name, value);
  executor.run();
  executor.run();  // a second run (the CUDA graph's replay) gives the same outputs
  std::vector<runtime::Tensor> outputs;
  for (int o = 0; o < executor.numOutputs(); ++o) outputs.push_back(executor.getOutput(o));
  return outputs;
}

}  // namespace

// The fused attention function as the schedule sees it, and the tiles it refuses.
TEST(GpuNetworks, AFusedAttentionFunctionIsRecognisedAndTiledByWholeBlocksOfRows) {
  Graph g = fuseAttention(fuseLayoutsIntoProducts(maskedAttention()));
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 1u) << "the heads' layouts, the scores, mask, softmax and context: one function";
  te::ComputeDAG dag = buildGroupDAG(g, groups[0]);
  auto shape = ops::gpuAttentionShapeOf(dag);
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->stack, 2);
  EXPECT_EQ(shape->rows, 7);
  EXPECT_EQ(shape->keys, 7);
  EXPECT_EQ(shape->depth, 4);
  EXPECT_EQ(shape->columns, 4);
  EXPECT_EQ(ops::defaultGpuAttentionTile(*shape, 132, 1024).rows, 1);  // 7 tokens: a prime
  ops::GpuAttentionTile ragged;
  ragged.rows = 2;
  expectContains(errorOf([&] { ops::gpuAttentionTiles(dag, *shape, ragged); }), "2 rows a block for 7 rows");
  // A lone product is no attention block.
  Graph apart = fuseLayoutsIntoProducts(maskedAttention());
  for (const auto& group : fuseOperators(apart)) EXPECT_FALSE(ops::gpuAttentionShapeOf(buildGroupDAG(apart, group)).has_value());
}

TEST(GpuNetworks, OpenclNetworksMatchTheInterpreter) {
  TESSEL_REQUIRE_OPENCL();
  for (auto& n : networks()) {
    SCOPED_TRACE(n.name);
    TempDir dir("tessel-gpu-net");
    BuildOptions options;
    options.target = target::Target::parse("opencl");
    BuildReport report = buildGraph(n.graph, dir.path(), options);
    EXPECT_GT(report.distinctKernels, 0);
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/kernels.cl"));
    auto inputs = inputsOf(n.graph);
    auto want = interpretGraph(n.graph, inputs);
    auto got = runOnDevice(dir.path(), {runtime::Device{runtime::DeviceKind::OpenCL, 0}, false}, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) EXPECT_LT(relativeError(got[o], want[o]), 1e-4) << "output " << o;
  }
}

TEST(GpuNetworks, CudaNetworksCompileWithNvrtcAndRunWhereAGpuIs) {
  std::string why;
  bool gpu = runtime::cudaDeviceAvailable(&why);
  for (auto& n : networks()) {
    SCOPED_TRACE(n.name);
    TempDir dir("tessel-gpu-net");
    BuildOptions options;
    options.target = target::Target::parse("cuda");
    buildGraph(n.graph, dir.path(), options);  // NVRTC: every kernel compiled to one sm_90 cubin
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/kernels.cubin"));
    if (!gpu) continue;
    auto inputs = inputsOf(n.graph);
    auto want = interpretGraph(n.graph, inputs);
    for (bool cudaGraph : {true, false}) {
      auto got = runOnDevice(dir.path(), {runtime::Device{runtime::DeviceKind::CUDA, 0}, cudaGraph}, inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < want.size(); ++o) EXPECT_LT(relativeError(got[o], want[o]), 1e-4) << "CUDA graph " << cudaGraph;
    }
  }
  if (!gpu) {
    if (tessel::testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
    GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
  }
}

namespace {

/// resnet-18 at 64x64 in NCHW with every stride-1 3x3 convolution as Winograd, the tile sizes
/// of `cycle` taking turns over its 13 layers (layer1's four, then three in each later stage,
/// 16x16 down to 2x2 images, with and without the residual add), as `compile --target opencl
/// --winograd 6|4|2` prepares them (the weight transforms folded).
Graph winogradResnet18(const std::vector<int>& cycle) {
  size_t turn = 0;
  Graph g = applyWinograd(prepared("resnet-18", 64, ops::Layout::NCHW), [&](const Graph&, int) { return cycle[turn++ % cycle.size()]; },
                          {}, ops::Layout::NCHW);
  std::map<int64_t, int> byTile;
  int total = 0;
  for (const Node& n : g.nodes())
    if (n.op == "conv2d_winograd") ++byTile[n.attrs.value("tile_size", 0)], ++total;
  EXPECT_EQ(total, 13);
  for (int m : cycle) EXPECT_GE(byTile[m], 1) << "F(" << m << "x" << m << ")";
  return g;
}

const std::vector<int> kOneLargeTile{6, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2};

}  // namespace

// The Winograd layers (ops/WinogradNchw.h) with the default GPU schedule's Winograd tiles,
// against the interpreter, whose NCHW Winograd kernel computes in doubles (the exact
// convolution): the float32 Winograd error through the thirteen layers, within 1e-4 of the
// output scale (measured: a few 1e-6 on PoCL).
TEST(GpuNetworks, OpenclResnet18WithWinogradLayersMatchesTheInterpreter) {
  TESSEL_REQUIRE_OPENCL();
  Graph g = winogradResnet18(kOneLargeTile);
  TempDir dir("tessel-gpu-net");
  BuildOptions options;
  options.target = target::Target::parse("opencl");
  buildGraph(g, dir.path(), options);
  auto inputs = inputsOf(g);
  auto want = interpretGraph(g, inputs);
  auto got = runOnDevice(dir.path(), {runtime::Device{runtime::DeviceKind::OpenCL, 0}, false}, inputs);
  ASSERT_EQ(got.size(), want.size());
  double error = relativeError(got[0], want[0]);
  std::printf("resnet-18 64x64 with F(6x6), F(4x4) and F(2x2) layers on OpenCL: %.3g of the output scale from the interpreter\n", error);
  EXPECT_LT(error, 1e-4);
}

TEST(GpuNetworks, CudaResnet18WithWinogradLayersCompilesWithNvrtcAndRunsWhereAGpuIs) {
  std::string why;
  bool gpu = runtime::cudaDeviceAvailable(&why);
  Graph g = winogradResnet18(kOneLargeTile);
  TempDir dir("tessel-gpu-net");
  BuildOptions options;
  // NVRTC's fast-compile mode: the values are checked, not the kernels' speed (full optimization:
  // CudaNetworksCompileWithNvrtcAndRunWhereAGpuIs).
  options.target = target::Target::parse("cuda -opt-level=0");
  buildGraph(g, dir.path(), options);
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/kernels.cubin"));
  if (gpu) {
    auto inputs = inputsOf(g);
    auto want = interpretGraph(g, inputs);
    auto got = runOnDevice(dir.path(), {runtime::Device{runtime::DeviceKind::CUDA, 0}, true}, inputs);
    EXPECT_LT(relativeError(got[0], want[0]), 1e-4);
    return;
  }
  if (tessel::testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
  GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
}

TEST(GpuNetworks, AModuleRunsOnlyOnTheDeviceKindItWasBuiltFor) {
  Graph g = softmaxHead();
  TempDir gpuDir("tessel-gpu-net"), cpuDir("tessel-gpu-net");
  BuildOptions options;
  options.target = target::Target::parse("opencl");
  buildGraph(g, gpuDir.path(), options);
  buildGraph(g, cpuDir.path());
  expectContains(errorOf([&] { runtime::GraphExecutor::load(gpuDir.path(), {runtime::Device{runtime::DeviceKind::CUDA, 0}}); }),
                 "the module was built for opencl devices, not cuda:0 (compile it with --target cuda, or run it with --device opencl)");
  expectContains(errorOf([&] { runtime::GraphExecutor::load(gpuDir.path()); }), "built for opencl devices, not cpu:0");
  expectContains(errorOf([&] { runtime::GraphExecutor::load(cpuDir.path(), {runtime::Device{runtime::DeviceKind::OpenCL, 0}}); }),
                 "built for cpu devices, not opencl:0");
}

TEST(GpuNetworks, ABuildTakesTheLimitsOfThePresentDeviceOrOfTheNamedProfile) {
  runtime::GpuDeviceInfo info;
  info.name = "test GPU";
  info.maxThreadsPerBlock = 512;
  info.maxBlockDimensions = {512, 256, 32};
  info.maxSharedMemoryPerBlock = 65536;
  info.maxSharedMemoryPerBlockOptIn = 101376;
  info.warpSize = 64;
  info.computeUnits = 7;
  auto limits = gpuLimitsOf(info, passes::GpuLimits::cudaSm90(), "cuda:1");
  EXPECT_EQ(limits.profile, "cuda:1 (test GPU)");
  EXPECT_EQ(limits.maxThreadsPerBlock, 512);
  EXPECT_EQ(limits.maxBlockDimensions, (std::array<int64_t, 3>{512, 256, 32}));
  EXPECT_EQ(limits.maxSharedMemoryPerBlock, 65536);
  EXPECT_EQ(limits.maxDynamicSharedMemoryPerBlock, 101376);
  EXPECT_EQ(limits.sharedMemoryLimit(), 101376);
  EXPECT_EQ(limits.warpSize, 64);
  EXPECT_EQ(limits.multiProcessorCount, 7);
  EXPECT_EQ(limits.maxVThreadExtent, passes::GpuLimits::cudaSm90().maxVThreadExtent);  // no device reports it
  // A named device profile is a cross-compilation: the device here does not matter.
  EXPECT_EQ(gpuLimitsForBuild(target::Target::parse("opencl -device=mali")).profile, "opencl mali");
  if (runtime::openclDeviceAvailable()) {
    auto device = runtime::openclDeviceInfo(0);
    auto here = gpuLimitsForBuild(target::Target::parse("opencl"));
    EXPECT_EQ(here.profile, "opencl:0 (" + device.name + ")");
    EXPECT_EQ(here.maxThreadsPerBlock, device.maxThreadsPerBlock);
    auto parameters = gpuHardwareParameters(runtime::Device{runtime::DeviceKind::OpenCL, 0});
    ASSERT_GE(parameters.size(), 4u);
    EXPECT_EQ(parameters[0], (std::pair<std::string, std::string>{"max_threads_per_block", std::to_string(device.maxThreadsPerBlock)}));
    EXPECT_EQ(parameters[1].first, "max_shared_memory_per_block");
    EXPECT_EQ(parameters[1].second, std::to_string(device.maxSharedMemoryPerBlock));
  } else {
    EXPECT_EQ(gpuLimitsForBuild(target::Target::parse("opencl")).profile, "opencl");
  }
  expectContains(errorOf([] { gpuHardwareParameters(runtime::Device::cpu()); }), "device 'cpu:0' is not a GPU");
}
