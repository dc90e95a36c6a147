#include "graph/passes/ConstantEvaluation.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <type_traits>

#include "graph/Interpreter.h"
#include "graph/Operators.h"
#include "ops/Conv2d.h"
#include "ops/MatmulPacked.h"
#include "ops/Winograd.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Same bytes, new shape.
runtime::Tensor reshaped(const runtime::Tensor& x, const std::vector<int64_t>& shape) {
  auto out = runtime::Tensor::empty(shape, x.dtype());
  std::memcpy(out.data(), x.data(), x.nbytes());
  return out;
}

/// numpy broadcasting of float32 operands onto the result shape.
runtime::Tensor broadcastFloat(const runtime::Tensor& a, const runtime::Tensor& b, const std::vector<int64_t>& shape,
                               const std::function<float(float, float)>& f) {
  auto out = runtime::Tensor::empty(shape, DataType::float32());
  size_t rank = shape.size();
  // Strides of each operand over the result's index space: 0 where it broadcasts.
  auto stridesFor = [&](const runtime::Tensor& t) {
    std::vector<int64_t> s(rank, 0);
    auto own = rowMajorStrides(t.shape());
    size_t offset = rank - t.shape().size();
    for (size_t i = 0; i < t.shape().size(); ++i)
      if (t.shape()[i] != 1) s[offset + i] = own[i];
    return s;
  };
  auto sa = stridesFor(a), sb = stridesFor(b);
  const float* pa = a.dataAs<float>();
  const float* pb = b.dataAs<float>();
  float* po = out.dataAs<float>();
  std::vector<int64_t> index(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t n = 0; n < out.numel(); ++n) {
    po[n] = f(pa[ia], pb[ib]);
    for (size_t d = rank; d-- > 0;) {
      ia += sa[d];
      ib += sb[d];
      if (++index[d] < shape[d]) break;
      ia -= sa[d] * shape[d];
      ib -= sb[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

/// Runs one operator through the reference interpreter on a graph of its inputs.
runtime::Tensor interpretOne(const std::string& op, const Attrs& attrs, const std::vector<runtime::Tensor>& inputs) {
  Graph g;
  std::vector<int> ids;
  std::map<std::string, runtime::Tensor> feed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "constant" + std::to_string(i);
    ids.push_back(g.addInput(name, {inputs[i].shape(), inputs[i].dtype()}));
    feed[name] = inputs[i];
  }
  g.markOutput(g.addOp(op, ids, attrs));
  return interpretGraph(g, feed).at(0);
}

}  // namespace

runtime::Tensor transposeTensor(const runtime::Tensor& x, const std::vector<int>& axes) {
  const auto& shape = x.shape();
  TESSEL_CHECK(axes.size() == shape.size(), "transposing a rank-{} tensor with {} axes", shape.size(), axes.size());
  std::vector<int64_t> outShape;
  for (int a : axes) outShape.push_back(shape.at(size_t(a)));
  auto out = runtime::Tensor::empty(outShape, x.dtype());
  size_t element = size_t(x.dtype().storageBytes());
  auto inStrides = rowMajorStrides(shape);
  size_t rank = axes.size();
  std::vector<int64_t> step(rank);  // input offset per step of each output dimension
  for (size_t k = 0; k < rank; ++k) step[k] = inStrides[size_t(axes[k])];
  const char* in = static_cast<const char*>(x.data());
  char* o = static_cast<char*>(out.data());
  // The element copy at its size known to the compiler (a load and a store, not a memcpy call):
  // a network's weights go through here in every layout change.
  auto copyAll = [&](auto elementSize) {
    const size_t bytes = elementSize;
    std::vector<int64_t> index(rank, 0);
    int64_t offset = 0;
    const int64_t count = out.numel();
    for (int64_t n = 0; n < count; ++n) {
      std::memcpy(o + size_t(n) * bytes, in + size_t(offset) * bytes, bytes);
      for (size_t d = rank; d-- > 0;) {
        offset += step[d];
        if (++index[d] < outShape[d]) break;
        offset -= step[d] * outShape[d];
        index[d] = 0;
      }
    }
  };
  switch (element) {
    case 1: copyAll(std::integral_constant<size_t, 1>{}); break;
    case 2: copyAll(std::integral_constant<size_t, 2>{}); break;
    case 4: copyAll(std::integral_constant<size_t, 4>{}); break;
    case 8: copyAll(std::integral_constant<size_t, 8>{}); break;
    default: copyAll(element);
  }
  return out;
}

runtime::Tensor evaluateOnConstants(const std::string& op, const Attrs& attrs, const std::vector<runtime::Tensor>& inputs,
                                    const TensorType& result) {
  if (op == "transpose") {
    std::vector<int> axes = attrs.value("axes", std::vector<int>{});
    int rank = inputs[0].ndim();
    if (axes.empty())
      for (int i = rank - 1; i >= 0; --i) axes.push_back(i);
    for (int& a : axes) a = a < 0 ? a + rank : a;
    return transposeTensor(inputs[0], axes);
  }
  if (op == "reshape" || op == "flatten") return reshaped(inputs[0], result.shape);
  if (op == "pack_conv_weight" && inputs[0].dtype() == DataType::float32() && inputs[0].ndim() == 4) {
    const float* w = inputs[0].dataAs<float>();
    auto packed = ops::packConvWeight(std::vector<float>(w, w + inputs[0].numel()), inputs[0].shape(), attrs.value("block", 32));
    auto out = runtime::Tensor::empty(result.shape, result.dtype);
    std::copy(packed.begin(), packed.end(), out.dataAs<float>());
    return out;
  }
  if (op == "pack_matmul_weight" && inputs[0].dtype() == DataType::float32() && inputs[0].ndim() == 2) {
    const float* w = inputs[0].dataAs<float>();
    const auto& s = inputs[0].shape();
    auto packed = ops::packMatmulWeight(std::vector<float>(w, w + inputs[0].numel()), s[0], s[1], attrs.value("block", 32));
    auto out = runtime::Tensor::empty(result.shape, result.dtype);
    std::copy(packed.begin(), packed.end(), out.dataAs<float>());
    return out;
  }
  if (op == "winograd_weight_transform" && inputs[0].dtype() == DataType::float32() && inputs[0].ndim() == 4) {
    const auto& s = inputs[0].shape();
    const float* w = inputs[0].dataAs<float>();
    ops::Layout layout = winogradWeightLayout(attrs);
    bool hwio = layout == ops::Layout::NHWC;
    auto u = ops::winogradWeightTransform(std::vector<float>(w, w + inputs[0].numel()), hwio ? s[2] : s[1], hwio ? s[3] : s[0],
                                          attrs.value("tile_size", 4), layout);
    auto out = runtime::Tensor::empty(result.shape, result.dtype);
    std::copy(u.begin(), u.end(), out.dataAs<float>());
    return out;
  }
  bool floats = result.dtype == DataType::float32() && inputs.size() == 2 && inputs[0].dtype() == DataType::float32() &&
                inputs[1].dtype() == DataType::float32();
  if (floats) {
    if (op == "multiply") return broadcastFloat(inputs[0], inputs[1], result.shape, [](float a, float b) { return a * b; });
    if (op == "add") return broadcastFloat(inputs[0], inputs[1], result.shape, [](float a, float b) { return a + b; });
    if (op == "subtract") return broadcastFloat(inputs[0], inputs[1], result.shape, [](float a, float b) { return a - b; });
    if (op == "divide") return broadcastFloat(inputs[0], inputs[1], result.shape, [](float a, float b) { return a / b; });
  }
  return interpretOne(op, attrs, inputs);
}

}  // namespace tessel::graph
