// The standard pass pipeline on every zoo network: the structure the build relies on (no
// batch norm left, per-channel scales inside the weights, every image operator in NHWC, a
// transpose into NHWC at the image — and one back where features are flattened — and no more
// parameters). That the optimized networks
// compute what the networks as built compute is checked, compiled, by the zoo's numeric test.
#include <gtest/gtest.h>

#include <map>

#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/VariantChoice.h"
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
    const bool transformer = name == "bert-base" || name == "gpt2" || name == "vit-b16";
    if (transformer) o.layers = 1;
    Graph original = buildModel(name, o);
    Graph optimized = optimizeGraph(original);
    EXPECT_EQ(countOps(optimized, "batch_norm"), 0) << name;
    EXPECT_EQ(countOps(optimized, "multiply"), 0) << name;   // every scale is inside a weight
    // The image into NHWC, nothing else; VGG flattens 7x7 features, which its classifier reads
    // in NCHW order, so they go back through a second (small) transpose. A transformer layer has
    // its four heads' transposes (query, key, value, context); ViT's image also goes into NHWC,
    // then into one row per patch for its patch product (patch_products), whose tokens need no
    // transpose (collapse_layout_chains removes the grid's NCHW round trip).
    int transposes = name.rfind("vgg", 0) == 0 ? 2 : 1;
    if (transformer) transposes = 4 + (name == "vit-b16" ? 2 : 0);
    EXPECT_EQ(countOps(optimized, "transpose"), transposes) << name;
    for (const Node& n : optimized.nodes())
      if (n.attrs.contains("layout")) {
        EXPECT_EQ(n.attrs["layout"], "NHWC") << name << " " << n.name;
      }
    // Every convolution stays one, but ViT's patch embedding, a matrix product now.
    EXPECT_EQ(countOps(optimized, "conv2d") + countOps(optimized, "depthwise_conv2d") + (name == "vit-b16"),
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

// Tuning measures the rules' Winograd layers one tile size larger: on resnet-18 with 1 MiB of L2,
// layer1's four 64-channel convolutions as F(6x6) (64 x 64 x 64 floats, 1 MiB, fit), layer2's
// and layer3's as F(4x4) (the rules' F(2x2)).
TEST(ModelPasses, CpuWinogradVariantsAddTheNextLargerTile) {
  Graph optimized = optimizeGraph(buildModel("resnet-18"));
  std::vector<Graph> variants = cpuWinogradVariants(optimized, size_t(1) << 20);
  ASSERT_EQ(variants.size(), 2u);
  auto rules = winogradTiles(variants[0]), large = winogradTiles(variants[1]);
  EXPECT_EQ(rules.size(), 10u);  // layer1 F(4x4), layer2 and layer3 F(2x2), layer4 direct
  EXPECT_EQ(rules.at("layer1_0_1_bn_mul"), 4);
  EXPECT_EQ(rules.at("layer2_1_1_bn_mul"), 2);
  ASSERT_EQ(large.size(), 10u);
  for (const auto& [name, m] : large) EXPECT_EQ(m, name.rfind("layer1_", 0) == 0 ? 6 : 4) << name;
  // 4 MiB: the rules make layer2 F(4x4) too, which fits as F(6x6); layer3 goes from F(2x2) to F(4x4).
  auto at4 = winogradTiles(cpuWinogradVariants(optimized, size_t(4) << 20).at(1));
  EXPECT_EQ(at4.size(), 10u);
  EXPECT_EQ(at4.at("layer2_1_1_bn_mul"), 6);
  EXPECT_EQ(at4.at("layer3_1_1_bn_mul"), 4);
  // 512 KiB (a Zen 3's L2): the rules make every layer F(2x2), the variant F(4x4).
  auto at512 = winogradTiles(cpuWinogradVariants(optimized, size_t(512) << 10).at(1));
  EXPECT_EQ(at512.size(), 10u);
  for (const auto& [name, m] : at512) EXPECT_EQ(m, 4) << name;
}

// A build with records gives each Winograd candidate layer its fastest measured variant, and a
// record of one variant is enough (issue 39, defect 13: a layer whose direct convolution alone
// had a record was built as the rules' Winograd, the record unused and the build saying "no
// record"). The rules decide only the layers measured in no variant.
TEST(ModelPasses, EachLayerTakesItsFastestMeasuredVariantWhateverWasMeasured) {
  Graph optimized = optimizeGraph(buildModel("resnet-18"));
  std::vector<Graph> variants = cpuWinogradVariants(optimized, size_t(1) << 20);
  ASSERT_EQ(variants.size(), 2u);
  auto directKeys = workloadKeysByNode(optimized), rulesKeys = workloadKeysByNode(variants[0]),
       largeKeys = workloadKeysByNode(variants[1]);
  std::map<std::string, double> cost;
  cost[directKeys.at("layer1_0_1_bn_mul")] = 1e-3;  // direct only
  cost[rulesKeys.at("layer2_1_1_bn_mul")] = 1e-3;   // F(2x2) only
  cost[directKeys.at("layer3_1_1_bn_mul")] = 1e-3;  // both ways: direct faster
  cost[rulesKeys.at("layer3_1_1_bn_mul")] = 2e-3;
  cost[directKeys.at("layer1_0_2_bn_mul")] = 3e-3;  // three ways: F(6x6) fastest
  cost[rulesKeys.at("layer1_0_2_bn_mul")] = 2e-3;
  cost[largeKeys.at("layer1_0_2_bn_mul")] = 1e-3;
  MeasuredCost costOf = [&](const std::string& key) -> std::optional<double> {
    auto it = cost.find(key);
    return it == cost.end() ? std::nullopt : std::optional<double>(it->second);
  };
  VariantChoice chosen = chooseVariantsByCost(optimized, variants, variants[0], costOf);
  auto tiles = winogradTiles(applyWinograd(optimized, chosen.choice));
  EXPECT_EQ(tiles.count("layer1_0_1_bn_mul"), 0u);  // direct, with its record
  EXPECT_EQ(tiles.at("layer2_1_1_bn_mul"), 2);
  EXPECT_EQ(tiles.count("layer3_1_1_bn_mul"), 0u);
  EXPECT_EQ(tiles.at("layer1_0_2_bn_mul"), 6);
  EXPECT_EQ(tiles.at("layer3_0_2_bn_mul"), winogradTiles(variants[0]).at("layer3_0_2_bn_mul"));  // measured in no variant
  const VariantChoiceCounts& n = chosen.counts;
  EXPECT_GE(n.onlyDirect, 1);
  EXPECT_GE(n.onlyWinograd, 1);
  EXPECT_GE(n.fasterDirect, 1);
  EXPECT_GE(n.fasterWinograd, 1);
  EXPECT_GE(n.byRules, 1);
  EXPECT_EQ(n.onlyDirect + n.onlyWinograd + n.fasterDirect + n.fasterWinograd + n.byRules, 10);  // every candidate once
  EXPECT_NE(n.describe().find("; measured one way: "), std::string::npos) << n.describe();
  // Nothing measured: the rules' network.
  VariantChoice none = chooseVariantsByCost(optimized, variants, variants[0], [](const std::string&) { return std::nullopt; });
  EXPECT_EQ(winogradTiles(applyWinograd(optimized, none.choice)), winogradTiles(variants[0]));
  EXPECT_EQ(none.counts.describe(), "measured both ways: 0 faster as Winograd, 0 faster direct; by the rules: 10");
}

}  // namespace
