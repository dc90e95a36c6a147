// MobileNet v1 (Gluon's mobilenet1.0; torchvision has none) and torchvision's mobilenet_v2.
#include <fmt/format.h>

#include "graph/NetBuilder.h"
#include "graph/ZooNetworks.h"

namespace tessel::graph::zoo {

/// A 3x3 stride-2 convolution then 13 depthwise-separable blocks, batch norm and relu after
/// every convolution.
Graph mobilenetV1(const ModelOptions& o) {
  NetBuilder b(o);
  int x = b.input(3, imageSize("mobilenet", o, 224, 1));
  x = b.convBnRelu(x, 32, 3, 2, 1, "conv0");
  const std::vector<std::pair<int64_t, int64_t>> blocks = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                                                           {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                                                           {512, 1}, {1024, 2}, {1024, 1}};
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto [out, stride] = blocks[i];
    x = b.convBnRelu(x, b.channels(x), 3, stride, 1, fmt::format("conv{}_dw", i + 1), true);
    x = b.convBnRelu(x, out, 1, 1, 0, fmt::format("conv{}_pw", i + 1));
  }
  x = b.globalAvgPool(x, "global_pool");
  return b.finish(b.flattenDense(x, o.classes, "fc"));
}

namespace {

/// conv (<name>_conv) + batch norm (<name>_bn) + relu6 (<name>_relu6): torchvision's
/// Conv2dNormActivation with ReLU6.
int convBnRelu6(NetBuilder& b, int x, int64_t out, int64_t kernel, int64_t stride, const std::string& name, bool depthwise = false) {
  int y = b.batchNorm(b.conv(x, out, kernel, stride, (kernel - 1) / 2, name + "_conv", depthwise), name + "_bn");
  return b.relu6(y, name + "_relu6");
}

/// The inverted residual: 1x1 expansion (none for expand ratio 1), 3x3 depthwise, linear 1x1
/// projection; the input added when stride 1 keeps the shape.
int invertedResidual(NetBuilder& b, int x, int64_t out, int64_t stride, int64_t expand, const std::string& name) {
  int64_t in = b.channels(x);
  int y = x;
  if (expand != 1) y = convBnRelu6(b, y, in * expand, 1, 1, name + "_expand");
  y = convBnRelu6(b, y, in * expand, 3, stride, name + "_dw", true);
  y = b.batchNorm(b.conv(y, out, 1, 1, 0, name + "_project_conv"), name + "_project_bn");
  if (stride == 1 && in == out) y = b.graph().addOp("add", {x, y}, Attrs::object(), name + "_add");
  return y;
}

}  // namespace

Graph mobilenetV2(const ModelOptions& o) {
  NetBuilder b(o);
  int x = b.input(3, imageSize("mobilenet-v2", o, 224, 1));
  x = convBnRelu6(b, x, 32, 3, 2, "conv0");
  struct Stage {
    int64_t expand, out, repeats, stride;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int block = 1;
  for (const Stage& s : stages)
    for (int64_t i = 0; i < s.repeats; ++i)
      x = invertedResidual(b, x, s.out, i == 0 ? s.stride : 1, s.expand, fmt::format("block{}", block++));
  x = convBnRelu6(b, x, 1280, 1, 1, "conv_last");
  x = b.globalAvgPool(x, "global_pool");
  return b.finish(b.flattenDense(x, o.classes, "fc"));
}

}  // namespace tessel::graph::zoo
