// The standard pass pipeline on every zoo network: the structure the build relies on (no
// batch norm left, per-channel scales inside the weights, every image operator in NHWC, a
// transpose into NHWC at the image — and one back where features are flattened — and no more
// parameters). That the optimized networks
// compute what the networks as built compute is checked, compiled, by the zoo's numeric test.
#include <gtest/gtest.h>

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

}  // namespace
