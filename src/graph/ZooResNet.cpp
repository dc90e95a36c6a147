// torchvision's ResNets: BasicBlock (resnet-18/34) and Bottleneck (50/101/152).
#include <fmt/format.h>

#include "graph/NetBuilder.h"
#include "graph/ZooNetworks.h"
#include "support/Error.h"

namespace tessel::graph::zoo {

namespace {

/// With the stride on the 3x3 convolution (torchvision's "v1.5") and a 1x1 strided projection
/// when the shape changes.
int residualBlock(NetBuilder& b, int x, int64_t width, int64_t stride, bool bottleneck, const std::string& name) {
  int64_t in = b.channels(x);
  int64_t out = bottleneck ? width * 4 : width;
  int shortcut = x;
  if (stride != 1 || in != out) shortcut = b.batchNorm(b.conv(x, out, 1, stride, 0, name + "_downsample_conv"), name + "_downsample_bn");
  int y;
  if (bottleneck) {
    y = b.convBnRelu(x, width, 1, 1, 0, name + "_1");
    y = b.convBnRelu(y, width, 3, stride, 1, name + "_2");
    y = b.batchNorm(b.conv(y, out, 1, 1, 0, name + "_3_conv"), name + "_3_bn");
  } else {
    y = b.convBnRelu(x, width, 3, stride, 1, name + "_1");
    y = b.batchNorm(b.conv(y, out, 3, 1, 1, name + "_2_conv"), name + "_2_bn");
  }
  int sum = b.graph().addOp("add", {y, shortcut}, Attrs::object(), name + "_add");
  return b.relu(sum, name + "_relu");
}

}  // namespace

Graph resnet(int depth, const ModelOptions& o) {
  std::vector<int> blocks;
  bool bottleneck = depth >= 50;
  switch (depth) {
    case 18: blocks = {2, 2, 2, 2}; break;
    case 34: blocks = {3, 4, 6, 3}; break;
    case 50: blocks = {3, 4, 6, 3}; break;
    case 101: blocks = {3, 4, 23, 3}; break;
    case 152: blocks = {3, 8, 36, 3}; break;
    default: fail("resnet-{}: no such depth (18, 34, 50, 101, 152)", depth);
  }
  NetBuilder b(o);
  int x = b.input(3, imageSize(fmt::format("resnet-{}", depth), o, 224, 1));
  const int64_t base = 64 / o.widthDivisor;
  x = b.convBnRelu(x, base, 7, 2, 3, "conv1");
  x = b.maxPool(x, 3, 2, 1, "maxpool");
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    int64_t width = base << stage;
    for (int i = 0; i < blocks[stage]; ++i)
      x = residualBlock(b, x, width, (i == 0 && stage > 0) ? 2 : 1, bottleneck, fmt::format("layer{}_{}", stage + 1, i));
  }
  x = b.globalAvgPool(x, "global_pool");
  return b.finish(b.flattenDense(x, o.classes, "fc"));
}

}  // namespace tessel::graph::zoo
