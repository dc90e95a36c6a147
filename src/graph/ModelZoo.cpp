#include "graph/ModelZoo.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <random>

#include "graph/Operators.h"
#include "support/Error.h"
#include "support/Hash.h"

namespace tessel::graph {

namespace {

/// Builds a network node by node in either layout, creating each layer's parameters.
class NetBuilder {
 public:
  explicit NetBuilder(const ModelOptions& o) : options_(o) { registerStandardOps(); }

  Graph& graph() { return graph_; }
  bool nhwc() const { return options_.layout == ops::Layout::NHWC; }
  const char* layoutName() const { return nhwc() ? "NHWC" : "NCHW"; }
  int channelAxis() const { return nhwc() ? 3 : 1; }
  int64_t channels(int x) const { return graph_.node(x).type.shape[size_t(channelAxis())]; }

  int input(int64_t channels, int64_t size) {
    std::vector<int64_t> shape = nhwc() ? std::vector<int64_t>{options_.batch, size, size, channels}
                                        : std::vector<int64_t>{options_.batch, channels, size, size};
    return graph_.addInput("data", {shape, DataType::float32()});
  }

  /// Uniform in [offset - limit, offset + limit], seeded by the name so that layer order does
  /// not matter.
  runtime::Tensor randomTensor(const std::string& name, std::vector<int64_t> shape, double limit, double offset = 0) {
    auto t = runtime::Tensor::empty(shape, DataType::float32());
    StableHasher h;
    h.add(name);
    h.add(int64_t(options_.seed));
    std::mt19937_64 rng(h.low());
    std::uniform_real_distribution<double> dist(-limit, limit);
    for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<float>()[i] = float(offset + dist(rng));
    return t;
  }
  int parameter(const std::string& name, std::vector<int64_t> shape, double limit, double offset = 0) {
    return graph_.addConstant(name, randomTensor(name, std::move(shape), limit, offset));
  }

  /// out has dimension k = w's dimension axes[k] (a 4-D transpose).
  static runtime::Tensor permute(const runtime::Tensor& w, std::array<int, 4> axes) {
    auto s = w.shape();
    auto out = runtime::Tensor::empty({s[size_t(axes[0])], s[size_t(axes[1])], s[size_t(axes[2])], s[size_t(axes[3])]},
                                      DataType::float32());
    std::array<int64_t, 4> stride{s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
    const float* in = w.dataAs<float>();
    float* o = out.dataAs<float>();
    auto os = out.shape();
    int64_t n = 0;
    for (int64_t i0 = 0; i0 < os[0]; ++i0)
      for (int64_t i1 = 0; i1 < os[1]; ++i1)
        for (int64_t i2 = 0; i2 < os[2]; ++i2)
          for (int64_t i3 = 0; i3 < os[3]; ++i3)
            o[n++] = in[i0 * stride[size_t(axes[0])] + i1 * stride[size_t(axes[1])] + i2 * stride[size_t(axes[2])] +
                        i3 * stride[size_t(axes[3])]];
    return out;
  }

  int conv(int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool depthwise = false) {
    int64_t in = channels(x);
    int64_t fanIn = (depthwise ? 1 : in) * kernel * kernel;
    double limit = std::sqrt(6.0 / double(fanIn));  // He uniform: variance 2 / fan_in
    // Drawn in torch's order (OIHW; depthwise [C, 1, KH, KW]) and transposed to HWIO for NHWC, so
    // both layouts of a network compute the same function.
    std::vector<int64_t> shape = depthwise ? std::vector<int64_t>{in, 1, kernel, kernel} : std::vector<int64_t>{out, in, kernel, kernel};
    runtime::Tensor weight = randomTensor(name + "_weight", shape, limit);
    if (nhwc()) weight = depthwise ? permute(weight, {2, 3, 0, 1}) : permute(weight, {2, 3, 1, 0});
    int w = graph_.addConstant(name + "_weight", weight);
    Attrs attrs = {{"strides", {stride, stride}}, {"padding", {pad, pad, pad, pad}}, {"layout", layoutName()}};
    return graph_.addOp(depthwise ? "depthwise_conv2d" : "conv2d", {x, w}, attrs, name);
  }

  int batchNorm(int x, const std::string& name) {
    int64_t c = channels(x);
    int gamma = parameter(name + "_gamma", {c}, 0.1, 1.0);
    int beta = parameter(name + "_beta", {c}, 0.1);
    int mean = parameter(name + "_moving_mean", {c}, 0.0);
    int var = parameter(name + "_moving_var", {c}, 0.0, 1.0);
    return graph_.addOp("batch_norm", {x, gamma, beta, mean, var}, {{"axis", channelAxis()}, {"epsilon", 1e-5}}, name);
  }

  int relu(int x, const std::string& name) { return graph_.addOp("relu", {x}, Attrs::object(), name); }

  int convBnRelu(int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool depthwise = false) {
    return relu(batchNorm(conv(x, out, kernel, stride, pad, name + "_conv", depthwise), name + "_bn"), name + "_relu");
  }

  int maxPool(int x, int64_t kernel, int64_t stride, int64_t pad, const std::string& name) {
    Attrs attrs = {{"kernel", {kernel, kernel}}, {"strides", {stride, stride}}, {"padding", {pad, pad, pad, pad}},
                   {"layout", layoutName()}};
    return graph_.addOp("max_pool2d", {x}, attrs, name);
  }

  /// Global average pooling, flatten, dense with bias, softmax: every classifier's head.
  int classifier(int x) {
    int64_t c = channels(x);
    x = graph_.addOp("global_avg_pool2d", {x}, {{"layout", layoutName()}}, "global_pool");
    x = graph_.addOp("flatten", {x}, Attrs::object(), "flatten");
    int w = parameter("fc_weight", {options_.classes, c}, 1.0 / std::sqrt(double(c)));
    int b = parameter("fc_bias", {options_.classes}, 1.0 / std::sqrt(double(c)));
    x = graph_.addOp("dense", {x, w}, Attrs::object(), "fc");
    x = graph_.addOp("bias_add", {x, b}, {{"axis", -1}}, "fc_bias_add");
    return graph_.addOp("softmax", {x}, {{"axis", -1}}, "softmax");
  }

 private:
  ModelOptions options_;
  Graph graph_;
};

/// torchvision's BasicBlock (resnet-18/34) and Bottleneck (50/101/152), with the stride on the
/// 3x3 convolution (torchvision's "v1.5") and a 1x1 strided projection when the shape changes.
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
  int x = b.input(3, o.imageSize > 0 ? o.imageSize : 224);
  x = b.convBnRelu(x, 64, 7, 2, 3, "conv1");
  x = b.maxPool(x, 3, 2, 1, "maxpool");
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    int64_t width = int64_t(64) << stage;
    for (int i = 0; i < blocks[stage]; ++i)
      x = residualBlock(b, x, width, (i == 0 && stage > 0) ? 2 : 1, bottleneck, fmt::format("layer{}_{}", stage + 1, i));
  }
  b.graph().markOutput(b.classifier(x));
  return std::move(b.graph());
}

/// MobileNet v1 (1.0, 224): a 3x3 stride-2 convolution then 13 depthwise-separable blocks,
/// batch norm and relu after every convolution.
Graph mobilenet(const ModelOptions& o) {
  NetBuilder b(o);
  int x = b.input(3, o.imageSize > 0 ? o.imageSize : 224);
  x = b.convBnRelu(x, 32, 3, 2, 1, "conv0");
  const std::vector<std::pair<int64_t, int64_t>> blocks = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                                                           {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                                                           {512, 1}, {1024, 2}, {1024, 1}};
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto [out, stride] = blocks[i];
    x = b.convBnRelu(x, b.channels(x), 3, stride, 1, fmt::format("conv{}_dw", i + 1), true);
    x = b.convBnRelu(x, out, 1, 1, 0, fmt::format("conv{}_pw", i + 1));
  }
  b.graph().markOutput(b.classifier(x));
  return std::move(b.graph());
}

}  // namespace

std::vector<std::string> modelNames() { return {"resnet-18", "resnet-34", "resnet-50", "resnet-101", "resnet-152", "mobilenet"}; }

Graph buildModel(const std::string& name, const ModelOptions& options) {
  TESSEL_CHECK(options.batch >= 1, "model '{}': batch must be at least 1, got {}", name, options.batch);
  if (name.rfind("resnet-", 0) == 0) {
    std::string depth = name.substr(7);
    TESSEL_CHECK(!depth.empty() && depth.find_first_not_of("0123456789") == std::string::npos, "unknown model '{}' (known: {})",
                 name, fmt::join(modelNames(), ", "));
    return resnet(std::stoi(depth), options);
  }
  if (name == "mobilenet") return mobilenet(options);
  fail("unknown model '{}' (known: {})", name, fmt::join(modelNames(), ", "));
}

}  // namespace tessel::graph
