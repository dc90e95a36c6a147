// The zoo's transformers (BERT-base, GPT-2 small, ViT-B/16): the references' parameters and
// layers, their options and errors, params files that hold the learned weights only, and the
// compiled networks against the reference interpreter. That they are the very function of
// bench/peers/transformers.py is checked against ONNX Runtime on that module's export with its
// weights (tests/graph/onnx/peer_exports.sh --zoo).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "common/ErrorText.h"
#include "common/FloatTensors.h"
#include "graph/Build.h"
#include "graph/GraphParams.h"
#include "graph/GraphTestSupport.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "runtime/Params.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;
using tessel::testsupport::relativeDifference;

namespace {

int64_t learnedValues(const Graph& g) {
  int64_t values = 0;
  for (const auto& [name, value] : learnedParams(g)) values += value.numel();
  return values;
}

std::map<std::string, int> opCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes())
    if (n.kind == NodeKind::Op) counts[n.op]++;
  return counts;
}

const Node& onlyInput(const Graph& g) {
  auto inputs = g.inputIds();
  EXPECT_EQ(inputs.size(), 1u);
  return g.node(inputs.at(0));
}

// The parameter counts the references publish (transformers' BertModel without its pooler,
// GPT2Model, timm's vit_base_patch16_224), which bench/peers/transformers.py's modules also
// have, and the layers each block is made of.
TEST(ZooTransformers, HaveTheReferencesParametersAndLayers) {
  struct Expected {
    std::string name;
    int64_t params;
    std::string input;
    TensorType inputType, outputType;
    int layerNorms, products, softmaxes, masks;
    std::string gelu;
  };
  const std::vector<Expected> expected = {
      // Per layer six linear layers and two attention products; two norms per layer and one more.
      {"bert-base", 108891648, "input_ids", {{1, 128}, DataType::int64()}, {{1, 128, 768}}, 25, 96, 12, 0, "none"},
      // Query, key and value as one projection (c_attn): four linear layers per block.
      {"gpt2", 124439808, "input_ids", {{1, 128}, DataType::int64()}, {{1, 128, 768}}, 25, 72, 12, 12, "tanh"},
      {"vit-b16", 86567656, "pixel_values", {{1, 3, 224, 224}}, {{1, 1000}}, 25, 96, 12, 0, "none"},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.name);
    Graph g = buildModel(e.name);
    EXPECT_EQ(learnedValues(g), e.params);
    const Node& input = onlyInput(g);
    EXPECT_EQ(input.name, e.input);
    EXPECT_EQ(input.type, e.inputType);
    ASSERT_EQ(g.outputs().size(), 1u);
    EXPECT_EQ(g.node(g.outputs()[0]).type, e.outputType);
    auto ops = opCounts(g);
    EXPECT_EQ(ops["layer_norm"], e.layerNorms);
    EXPECT_EQ(ops["batch_matmul"], e.products);
    EXPECT_EQ(ops["softmax"], e.softmaxes);
    EXPECT_EQ(ops["where"], e.masks);
    EXPECT_EQ(ops["gelu"], 12);
    for (const Node& n : g.nodes())
      if (n.op == "gelu") {
        EXPECT_EQ(n.attrs.value("approximate", ""), e.gelu) << n.name;
      }
    // The state dict's names: what a params file of the PyTorch module's weights holds.
    const char* lastWeight = e.name == "bert-base" ? "layers.11.output.weight" : "blocks.11.proj.weight";
    ASSERT_GE(g.findNode(lastWeight), 0) << lastWeight;
    EXPECT_TRUE(g.isLearned(lastWeight));
  }
  Graph bert = buildModel("bert-base");
  // torch's nn.Linear weight [out, in]; the graph multiplies by its transpose.
  EXPECT_EQ(bert.node(bert.findNode("layers.0.intermediate.weight")).type.shape, (std::vector<int64_t>{3072, 768}));
  EXPECT_EQ(bert.node(bert.findNode("word.weight")).type.shape, (std::vector<int64_t>{30522, 768}));
}

TEST(ZooTransformers, OptionsShapeTheNetworkAndBadOnesAreErrors) {
  ModelOptions o;
  o.layers = 2;
  o.sequence = 64;
  o.batch = 3;
  Graph bert = buildModel("bert-base", o);
  EXPECT_EQ(onlyInput(bert).type.shape, (std::vector<int64_t>{3, 64}));
  EXPECT_EQ(opCounts(bert)["layer_norm"], 5);
  EXPECT_EQ(bert.node(bert.outputs()[0]).type.shape, (std::vector<int64_t>{3, 64, 768}));
  Graph gpt2 = buildModel("gpt2", o);
  const runtime::Tensor& mask = gpt2.constant(gpt2.findNode("blocks.1.attention.causal"));
  EXPECT_EQ(mask.shape(), (std::vector<int64_t>{1, 1, 64, 64}));
  EXPECT_TRUE(mask.dataAs<bool>()[64 * 5 + 5]);
  EXPECT_FALSE(mask.dataAs<bool>()[64 * 5 + 6]) << "a token sees no later token";
  EXPECT_FALSE(gpt2.isLearned("blocks.1.attention.causal"));

  ModelOptions vit;
  vit.layers = 1;
  vit.imageSize = 64;
  vit.classes = 10;
  vit.batch = 2;
  Graph v = buildModel("vit-b16", vit);
  EXPECT_EQ(v.node(v.findNode("position")).type.shape, (std::vector<int64_t>{1, 17, 768})) << "16 patches and the class token";
  EXPECT_EQ(v.node(v.outputs()[0]).type.shape, (std::vector<int64_t>{2, 10}));
  vit.layout = ops::Layout::NHWC;
  Graph nhwc = buildModel("vit-b16", vit);
  EXPECT_EQ(onlyInput(nhwc).type.shape, (std::vector<int64_t>{2, 64, 64, 3}));
  EXPECT_EQ(nhwc.node(nhwc.findNode("patch.weight")).type.shape, (std::vector<int64_t>{16, 16, 3, 768})) << "HWIO";

  ModelOptions bad;
  bad.sequence = 513;
  expectContains(errorOf([&] { buildModel("bert-base", bad); }), "bert-base: sequence 513 is longer than its 512 positions");
  bad.sequence = 1025;
  expectContains(errorOf([&] { buildModel("gpt2", bad); }), "gpt2: sequence 1025 is longer than its 1024 positions");
  bad.sequence = 16;
  expectContains(errorOf([&] { buildModel("vit-b16", bad); }), "model 'vit-b16': only bert-base and gpt2 read a sequence");
  bad = {};
  bad.layers = 2;
  expectContains(errorOf([&] { buildModel("resnet-18", bad); }), "model 'resnet-18': only the transformers have a layer count");
  bad.layers = -1;
  expectContains(errorOf([&] { buildModel("gpt2", bad); }), "layers must be positive");
  bad = {};
  bad.imageSize = 100;
  expectContains(errorOf([&] { buildModel("vit-b16", bad); }), "vit-b16: image size 100 is not a multiple of the 16-pixel patch");
  bad.imageSize = 8;
  expectContains(errorOf([&] { buildModel("vit-b16", bad); }), "vit-b16: image size 8 is too small (at least 16x16)");
  bad = {};
  bad.widthDivisor = 2;
  expectContains(errorOf([&] { buildModel("bert-base", bad); }), "only ResNet and VGG have narrower variants");
}

// The scale, the causal mask and the position indices are the network's definition, not
// weights: a params file neither holds nor needs them, and one written from the PyTorch module's
// state dict (which has none of them) loads.
TEST(ZooTransformers, ParamsFilesHoldTheLearnedWeightsOnly) {
  ModelOptions o;
  o.layers = 1;
  o.sequence = 8;
  Graph original = buildModel("gpt2", o);
  TempDir dir;
  std::string path = dir.path() + "/gpt2.params";
  saveGraphParams(original, path);
  runtime::NamedTensors file = runtime::loadParams(path);
  EXPECT_EQ(file.size(), learnedParams(original).size());
  EXPECT_LT(file.size(), original.params().size());
  EXPECT_FALSE(file.count("blocks.0.attention.causal"));
  EXPECT_FALSE(file.count("position_ids"));
  EXPECT_TRUE(file.count("blocks.0.attention.qkv.weight"));
  o.seed = 7;
  Graph other = buildModel("gpt2", o);
  const runtime::Tensor& before = other.constant(other.findNode("wte.weight"));
  EXPECT_NE(std::memcmp(before.data(), original.constant(original.findNode("wte.weight")).data(), before.nbytes()), 0);
  loadGraphParams(other, path);
  for (const auto& [name, value] : original.params()) {
    const runtime::Tensor& loaded = other.constant(other.findNode(name));
    EXPECT_EQ(std::memcmp(loaded.data(), value.data(), value.nbytes()), 0) << name;
  }
  // A file that names a fixed constant is refused like any other unknown name.
  file["blocks.0.attention.scale"] = original.constant(original.findNode("blocks.0.attention.scale"));
  runtime::saveParams(file, path);
  expectContains(errorOf([&] { loadGraphParams(other, path); }),
                 "1 parameter in the file that the graph does not have: 'blocks.0.attention.scale'");
}

runtime::Tensor tokenIds(int64_t batch, int64_t tokens, int64_t vocabulary, uint32_t seed) {
  auto t = runtime::Tensor::empty({batch, tokens}, DataType::int64());
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, vocabulary - 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<int64_t>()[i] = pick(rng);
  return t;
}

/// The output of the graph through the standard passes, built with the default CPU schedule
/// (kernels at -O0, as the numeric sweeps compile them: the arithmetic is what is checked).
runtime::Tensor runStandardBuild(const Graph& g, const std::string& input, const runtime::Tensor& value) {
  const target::Target target = target::Target::parse("cpu -opt-level=0");
  OptimizeOptions passes;
  passes.pack = defaultPackChoice(target.cpu);
  BuildOptions options;
  options.target = target;
  options.schedule = [rules = ops::cpuScheduleOptionsFor(target)](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag, rules); };
  return graph::testsupport::runCompiled(optimizeGraph(g, passes), {{input, value}}, options)[0];
}

// One layer of each at a short sequence (ViT on a 32x32 image: four patches and the class
// token), batch 2, through the standard passes (query, key and value combined, weights
// packed) against the double-precision interpreter on the graph as built.
TEST(ZooTransformers, CompiledNetworksMatchTheInterpreter) {
  ModelOptions o;
  o.layers = 1;
  o.sequence = 16;
  o.batch = 2;
  for (const auto& [name, vocabulary] : std::vector<std::pair<std::string, int64_t>>{{"bert-base", 30522}, {"gpt2", 50257}}) {
    Graph g = buildModel(name, o);
    runtime::Tensor ids = tokenIds(2, 16, vocabulary, 5);
    auto reference = interpretGraph(g, {{"input_ids", ids}});
    EXPECT_LT(relativeDifference(runStandardBuild(g, "input_ids", ids), reference[0]), 1e-4) << name;
  }
  ModelOptions vit;
  vit.layers = 1;
  vit.imageSize = 32;
  vit.classes = 10;
  Graph g = buildModel("vit-b16", vit);
  runtime::Tensor image = graph::testsupport::randomTensor({1, 3, 32, 32}, 6);
  auto reference = interpretGraph(g, {{"pixel_values", image}});
  EXPECT_LT(relativeDifference(runStandardBuild(g, "pixel_values", image), reference[0]), 1e-4) << "vit-b16";
}

}  // namespace
