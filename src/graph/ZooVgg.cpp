// torchvision's VGG without batch norm (configurations A, B, D, E: vgg11, 13, 16, 19).
#include <fmt/format.h>

#include "graph/NetBuilder.h"
#include "graph/ZooNetworks.h"
#include "support/Error.h"

namespace tessel::graph::zoo {

Graph vgg(int depth, const ModelOptions& o) {
  // Convolutions (3x3, padding 1, bias, relu) per stage; each stage ends in a 2x2 max pool.
  std::vector<int> convs;
  switch (depth) {
    case 11: convs = {1, 1, 2, 2, 2}; break;
    case 13: convs = {2, 2, 2, 2, 2}; break;
    case 16: convs = {2, 2, 3, 3, 3}; break;
    case 19: convs = {2, 2, 4, 4, 4}; break;
    default: fail("vgg-{}: no such depth (11, 13, 16, 19)", depth);
  }
  NetBuilder b(o);
  int x = b.input(3, imageSize(fmt::format("vgg-{}", depth), o, 224, 32));
  const int64_t widths[] = {64, 128, 256, 512, 512};
  for (size_t stage = 0; stage < convs.size(); ++stage) {
    for (int i = 0; i < convs[stage]; ++i) {
      std::string name = fmt::format("conv{}_{}", stage + 1, i + 1);
      x = b.relu(b.conv(x, ConvLayer{widths[stage] / o.widthDivisor, {3, 3}, {1, 1}, {1, 1}, false, true}, name), name + "_relu");
    }
    x = b.maxPool(x, 2, 2, 0, fmt::format("pool{}", stage + 1));
  }
  // The identity at 224 (7x7 already); on smaller images it replicates pixels up to 7x7, so
  // that the classifier keeps its 25088 inputs.
  x = b.adaptiveAvgPool(x, {7, 7}, "avgpool");
  int64_t hidden = o.classifierWidth > 0 ? o.classifierWidth : 4096;
  x = b.relu(b.flattenDense(x, hidden, "fc6"), "fc6_relu");
  x = b.relu(b.dense(x, hidden, "fc7"), "fc7_relu");
  return b.finish(b.dense(x, o.classes, "fc8"));
}

}  // namespace tessel::graph::zoo
