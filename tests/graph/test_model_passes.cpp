// The standard pass pipeline on every zoo network: the structure the build relies on (no
// batch norm left, per-channel scales inside the weights, every image operator in NHWC, a
// transpose into NHWC at the image — and one back where features are flattened — and no more
// parameters). That the optimized networks
// compute what the networks as built compute is checked, compiled, by the zoo's numeric test.
#include <gtest/gtest.h>

#include <map>

#include "graph/ModelZoo.h"
#include "graph/passes/PassManager.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

int countOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == NodeKind::Op && node.op == op;
  return n;
}

TEST(ModelPasses, StandardPipelineLeavesNhwcConvolutionsWithFoldedBatchNorms) {
  for (const std::string& name : modelNames()) {
    ModelOptions o;
    o.imageSize = name == "inception_v3" ? 75 : 32;
    o.classes = 10;
    o.classifierWidth = 16;
    Graph original = buildModel(name, o);
    Graph optimized = optimizeGraph(original);
    EXPECT_EQ(countOps(optimized, "batch_norm"), 0) << name;
    EXPECT_EQ(countOps(optimized, "multiply"), 0) << name;   // every scale is inside a weight
    // The image into NHWC, nothing else; VGG flattens 7x7 features, which its classifier reads
    // in NCHW order, so they go back through a second (small) transpose.
    EXPECT_EQ(countOps(optimized, "transpose"), name.rfind("vgg", 0) == 0 ? 2 : 1) << name;
    for (const Node& n : optimized.nodes())
      if (n.attrs.contains("layout")) {
        EXPECT_EQ(n.attrs["layout"], "NHWC") << name << " " << n.name;
      }
    EXPECT_EQ(countOps(optimized, "conv2d") + countOps(optimized, "depthwise_conv2d"),
              countOps(original, "conv2d") + countOps(original, "depthwise_conv2d"))
        << name;
    EXPECT_LE(optimized.params().size(), original.params().size()) << name;
  }
}

/// The tile size of every conv2d_winograd, by node name.
std::map<std::string, int> winogradTiles(const Graph& g) {
  std::map<std::string, int> tiles;
  for (const Node& n : g.nodes())
    if (n.kind == NodeKind::Op && n.op == "conv2d_winograd") tiles[n.name] = int(n.attrs.value("tile_size", 0));
  return tiles;
}

// Tuning measures F(6x6) beside the rules' tile on the layers whose transformed weight fits the
// L2: on resnet-18 with 1 MiB, layer1's four 64-channel convolutions (64 x 64 x 64 floats, 1 MiB).
TEST(ModelPasses, CpuWinogradVariantsAddTheLargeTileWhereItFits) {
  Graph optimized = optimizeGraph(buildModel("resnet-18"));
  std::vector<Graph> variants = cpuWinogradVariants(optimized, size_t(1) << 20);
  ASSERT_EQ(variants.size(), 2u);
  auto rules = winogradTiles(variants[0]), large = winogradTiles(variants[1]);
  EXPECT_EQ(rules.size(), 10u);  // layer1 F(4x4), layer2 and layer3 F(2x2), layer4 direct
  EXPECT_EQ(rules.at("layer1_0_1_bn_mul"), 4);
  EXPECT_EQ(rules.at("layer2_1_1_bn_mul"), 2);
  ASSERT_EQ(large.size(), 4u);
  for (const auto& [name, m] : large) {
    EXPECT_EQ(name.rfind("layer1_", 0), 0u) << name;
    EXPECT_EQ(m, 6) << name;
  }
  // A larger L2 takes layer2 too; a smaller one, where F(6x6)'s 1 MiB does not fit, only the rules.
  EXPECT_EQ(winogradTiles(cpuWinogradVariants(optimized, size_t(4) << 20).at(1)).size(), 7u);
  EXPECT_EQ(cpuWinogradVariants(optimized, size_t(512) << 10).size(), 1u);
}

}  // namespace
