// torchvision's SqueezeNet 1.0 and 1.1: Fire modules (a 1x1 squeeze, then 1x1 and 3x3
// expansions concatenated), max pools in ceil mode, and a convolutional classifier.
#include <fmt/format.h>

#include "graph/NetBuilder.h"
#include "graph/ZooNetworks.h"
#include "support/Error.h"

namespace tessel::graph::zoo {

namespace {

int convRelu(NetBuilder& b, int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name) {
  return b.relu(b.conv(x, ConvLayer{out, {kernel, kernel}, {stride, stride}, {pad, pad}, false, true}, name), name + "_relu");
}

int fire(NetBuilder& b, int x, int64_t squeeze, int64_t expand, const std::string& name) {
  int s = convRelu(b, x, squeeze, 1, 1, 0, name + "_squeeze");
  int e1 = convRelu(b, s, expand, 1, 1, 0, name + "_expand1x1");
  int e3 = convRelu(b, s, expand, 3, 1, 1, name + "_expand3x3");
  return b.concatChannels({e1, e3}, name + "_concat");
}

}  // namespace

Graph squeezenet(const std::string& version, const ModelOptions& o) {
  TESSEL_CHECK(version == "1.0" || version == "1.1", "squeezenet_v{}: no such version (1.0, 1.1)", version);
  bool v10 = version == "1.0";
  NetBuilder b(o);
  int x = b.input(3, imageSize("squeezenet_v" + version, o, 224, v10 ? 21 : 17));
  auto pool = [&](int y, int n) { return b.maxPool(y, 3, 2, 0, fmt::format("pool{}", n), true); };
  // Fire modules numbered from 2 as in the paper; (squeeze, expand) widths.
  if (v10) {
    x = pool(convRelu(b, x, 96, 7, 2, 0, "conv1"), 1);
    x = fire(b, x, 16, 64, "fire2");
    x = fire(b, x, 16, 64, "fire3");
    x = fire(b, x, 32, 128, "fire4");
    x = pool(x, 4);
    x = fire(b, x, 32, 128, "fire5");
    x = fire(b, x, 48, 192, "fire6");
    x = fire(b, x, 48, 192, "fire7");
    x = fire(b, x, 64, 256, "fire8");
    x = pool(x, 8);
    x = fire(b, x, 64, 256, "fire9");
  } else {
    x = pool(convRelu(b, x, 64, 3, 2, 0, "conv1"), 1);
    x = fire(b, x, 16, 64, "fire2");
    x = fire(b, x, 16, 64, "fire3");
    x = pool(x, 3);
    x = fire(b, x, 32, 128, "fire4");
    x = fire(b, x, 32, 128, "fire5");
    x = pool(x, 5);
    x = fire(b, x, 48, 192, "fire6");
    x = fire(b, x, 48, 192, "fire7");
    x = fire(b, x, 64, 256, "fire8");
    x = fire(b, x, 64, 256, "fire9");
  }
  // The classifier: a 1x1 convolution to the classes, relu, average over the image.
  x = convRelu(b, x, o.classes, 1, 1, 0, "conv10");
  x = b.globalAvgPool(x, "global_pool");
  return b.finish(b.graph().addOp("flatten", {x}, Attrs::object(), "flatten"));
}

}  // namespace tessel::graph::zoo
