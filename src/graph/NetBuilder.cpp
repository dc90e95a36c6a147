#include "graph/NetBuilder.h"

#include <cmath>
#include <cstring>

#include "graph/Operators.h"
#include "support/Error.h"
#include "support/Hash.h"

namespace tessel::graph {

NetBuilder::NetBuilder(const ModelOptions& options) : options_(options) { registerStandardOps(); }

int64_t NetBuilder::channels(int x) const { return graph_.node(x).type.shape[size_t(channelAxis())]; }

std::array<int64_t, 2> NetBuilder::spatial(int x) const {
  const auto& s = graph_.node(x).type.shape;
  return nhwc() ? std::array<int64_t, 2>{s[1], s[2]} : std::array<int64_t, 2>{s[2], s[3]};
}

int NetBuilder::input(int64_t channels, int64_t size) {
  std::vector<int64_t> shape = nhwc() ? std::vector<int64_t>{options_.batch, size, size, channels}
                                      : std::vector<int64_t>{options_.batch, channels, size, size};
  return graph_.addInput("data", {shape, DataType::float32()});
}

runtime::Tensor NetBuilder::randomTensor(const std::string& name, std::vector<int64_t> shape, double limit, double offset) {
  auto t = runtime::Tensor::empty(shape, DataType::float32());
  StableHasher h;
  h.add(name);
  h.add(int64_t(options_.seed));
  // Element i is a hash of (name, seed, i) — splitmix64's finalizer — rather than the i-th
  // draw of a sequential generator: a few nanoseconds an element, which matters for the 60 to
  // 140 million weights of resnet-152 and VGG.
  uint64_t base = h.low();
  float* p = t.dataAs<float>();
  const int64_t count = t.numel();
  for (int64_t i = 0; i < count; ++i) {
    uint64_t z = base + uint64_t(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double unit = double(z >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    p[i] = float(offset + limit * (2 * unit - 1));
  }
  return t;
}

int NetBuilder::parameter(const std::string& name, std::vector<int64_t> shape, double limit, double offset) {
  return graph_.addConstant(name, randomTensor(name, std::move(shape), limit, offset));
}

runtime::Tensor NetBuilder::permute(const runtime::Tensor& w, std::array<int, 4> axes) {
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

int NetBuilder::conv(int x, const ConvLayer& layer, const std::string& name) {
  int64_t in = channels(x);
  int64_t out = layer.depthwise ? in : layer.out;
  int64_t fanIn = (layer.depthwise ? 1 : in) * layer.kernel[0] * layer.kernel[1];
  double limit = std::sqrt(6.0 / double(fanIn));  // He uniform: variance 2 / fan_in
  // Drawn in torch's order (OIHW; depthwise [C, 1, KH, KW]) and transposed to HWIO for NHWC.
  std::vector<int64_t> shape = layer.depthwise ? std::vector<int64_t>{in, 1, layer.kernel[0], layer.kernel[1]}
                                               : std::vector<int64_t>{out, in, layer.kernel[0], layer.kernel[1]};
  runtime::Tensor weight = randomTensor(name + "_weight", shape, limit);
  if (nhwc()) weight = layer.depthwise ? permute(weight, {2, 3, 0, 1}) : permute(weight, {2, 3, 1, 0});
  int w = graph_.addConstant(name + "_weight", weight);
  auto [ph, pw] = layer.padding;
  Attrs attrs = {{"strides", {layer.stride[0], layer.stride[1]}}, {"padding", {ph, pw, ph, pw}}, {"layout", layoutName()}};
  int y = graph_.addOp(layer.depthwise ? "depthwise_conv2d" : "conv2d", {x, w}, attrs, name);
  if (!layer.bias) return y;
  // torch's default bias range, 1 / sqrt(fan_in): small against the He-scaled products.
  int b = parameter(name + "_bias", {out}, 1.0 / std::sqrt(double(fanIn)));
  return graph_.addOp("bias_add", {y, b}, {{"axis", channelAxis()}}, name + "_bias_add");
}

int NetBuilder::conv(int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool depthwise) {
  return conv(x, ConvLayer{out, {kernel, kernel}, {stride, stride}, {pad, pad}, depthwise, false}, name);
}

int NetBuilder::batchNorm(int x, const std::string& name, double epsilon) {
  int64_t c = channels(x);
  int gamma = parameter(name + "_gamma", {c}, 0.1, 1.0);
  int beta = parameter(name + "_beta", {c}, 0.1);
  int mean = parameter(name + "_moving_mean", {c}, 0.0);
  int var = parameter(name + "_moving_var", {c}, 0.0, 1.0);
  return graph_.addOp("batch_norm", {x, gamma, beta, mean, var}, {{"axis", channelAxis()}, {"epsilon", epsilon}}, name);
}

int NetBuilder::relu(int x, const std::string& name) { return graph_.addOp("relu", {x}, Attrs::object(), name); }

int NetBuilder::relu6(int x, const std::string& name) { return graph_.addOp("relu6", {x}, Attrs::object(), name); }

int NetBuilder::convBnRelu(int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool depthwise) {
  return relu(batchNorm(conv(x, out, kernel, stride, pad, name + "_conv", depthwise), name + "_bn"), name + "_relu");
}

int NetBuilder::maxPool(int x, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool ceilMode) {
  Attrs attrs = {{"kernel", {kernel, kernel}}, {"strides", {stride, stride}}, {"padding", {pad, pad, pad, pad}},
                 {"layout", layoutName()}};
  if (ceilMode) attrs["ceil_mode"] = true;
  return graph_.addOp("max_pool2d", {x}, attrs, name);
}

int NetBuilder::avgPool(int x, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool countIncludePad) {
  Attrs attrs = {{"kernel", {kernel, kernel}}, {"strides", {stride, stride}}, {"padding", {pad, pad, pad, pad}},
                 {"count_include_pad", countIncludePad}, {"layout", layoutName()}};
  return graph_.addOp("avg_pool2d", {x}, attrs, name);
}

int NetBuilder::adaptiveAvgPool(int x, std::array<int64_t, 2> outputSize, const std::string& name) {
  return graph_.addOp("adaptive_avg_pool2d", {x}, {{"output_size", {outputSize[0], outputSize[1]}}, {"layout", layoutName()}}, name);
}

int NetBuilder::globalAvgPool(int x, const std::string& name) {
  return graph_.addOp("global_avg_pool2d", {x}, {{"layout", layoutName()}}, name);
}

int NetBuilder::concatChannels(const std::vector<int>& xs, const std::string& name) {
  return graph_.addOp("concatenate", xs, {{"axis", channelAxis()}}, name);
}

int NetBuilder::flattenDense(int x, int64_t units, const std::string& name) {
  int64_t c = channels(x);
  auto [h, w] = spatial(x);
  int64_t features = c * h * w;
  int flat = graph_.addOp("flatten", {x}, Attrs::object(), name + "_flatten");
  double limit = 1.0 / std::sqrt(double(features));
  // Drawn in torch's shape: the same values as [units, features] in NCHW's flatten order.
  runtime::Tensor weight = randomTensor(name + "_weight", {units, c, h, w}, limit);
  // torch flattens (c, h, w); NHWC flattens (h, w, c): permute the columns to match.
  if (nhwc() && h * w > 1) weight = permute(weight, {0, 2, 3, 1});
  runtime::Tensor matrix = runtime::Tensor::empty({units, features}, DataType::float32());
  std::memcpy(matrix.data(), weight.data(), matrix.nbytes());
  int wNode = graph_.addConstant(name + "_weight", matrix);
  int b = parameter(name + "_bias", {units}, limit);
  int y = graph_.addOp("dense", {flat, wNode}, Attrs::object(), name);
  return graph_.addOp("bias_add", {y, b}, {{"axis", -1}}, name + "_bias_add");
}

int NetBuilder::dense(int x, int64_t units, const std::string& name) {
  int64_t features = graph_.node(x).type.shape.back();
  double limit = 1.0 / std::sqrt(double(features));
  int w = parameter(name + "_weight", {units, features}, limit);
  int b = parameter(name + "_bias", {units}, limit);
  int y = graph_.addOp("dense", {x, w}, Attrs::object(), name);
  return graph_.addOp("bias_add", {y, b}, {{"axis", -1}}, name + "_bias_add");
}

Graph NetBuilder::finish(int logits) {
  graph_.markOutput(graph_.addOp("softmax", {logits}, {{"axis", -1}}, "softmax"));
  return std::move(graph_);
}

}  // namespace tessel::graph
