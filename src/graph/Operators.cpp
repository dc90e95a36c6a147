#include "graph/Operators.h"

#include <mutex>
#include <optional>

#include "graph/OpRegistry.h"
#include "ops/BatchNorm.h"
#include "ops/Broadcast.h"
#include "ops/Conv2d.h"
#include "ops/Conv2dBlocked.h"
#include "ops/Conv2dTranspose.h"
#include "ops/Dense.h"
#include "ops/DenseBlocked.h"
#include "ops/MatmulPacked.h"
#include "ops/Elementwise.h"
#include "ops/LayerNorm.h"
#include "ops/Pooling.h"
#include "ops/Quantize.h"
#include "ops/Reduce.h"
#include "ops/Resize.h"
#include "ops/Softmax.h"
#include "ops/Transform.h"
#include "ops/Winograd.h"
#include "support/Error.h"
#include "support/JsonEcho.h"

namespace tessel::graph {

namespace {

using Inputs = std::vector<te::Tensor>;

/// Reads attributes with their types checked, so a malformed attribute names itself.
class AttrReader {
 public:
  AttrReader(const std::string& op, const Attrs& attrs) : op_(op), attrs_(attrs) {}

  template <class T>
  T get(const std::string& key, T fallback) const {
    if (!attrs_.contains(key)) return fallback;
    try {
      return attrs_.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
      fail("{}: attribute '{}' has an invalid value {}", op_, key, jsonEcho(attrs_.at(key)));
    }
  }
  template <size_t N>
  std::array<int64_t, N> array(const std::string& key, std::array<int64_t, N> fallback) const {
    auto values = get<std::vector<int64_t>>(key, std::vector<int64_t>(fallback.begin(), fallback.end()));
    // Two values for a four-sided padding mean (vertical, horizontal), as Relay accepts.
    if (N == 4 && values.size() == 2) values = {values[0], values[1], values[0], values[1]};
    TESSEL_CHECK(values.size() == N, "{}: attribute '{}' needs {} values, got {}", op_, key, N, values.size());
    std::array<int64_t, N> out{};
    std::copy(values.begin(), values.end(), out.begin());
    return out;
  }
  ops::Layout layout() const { return ops::parseLayout(get<std::string>("layout", "NCHW")); }
  ops::Layout weightLayout() const { return winogradWeightLayout(attrs_); }
  std::optional<DataType> outDtype() const {
    if (!attrs_.contains("out_dtype")) return std::nullopt;
    return DataType::parse(get<std::string>("out_dtype", ""));
  }

 private:
  const std::string& op_;
  const Attrs& attrs_;
};

void add(const std::string& name, OpPattern pattern, size_t minInputs, size_t maxInputs,
         std::function<te::Tensor(const Inputs&, const AttrReader&)> compute) {
  registerOp({name, pattern, minInputs, maxInputs, [name, compute](const Inputs& in, const Attrs& attrs) {
                return compute(in, AttrReader(name, attrs));
              }});
}

ops::Conv2dAttrs convAttrs(const AttrReader& a) {
  ops::Conv2dAttrs c;
  c.strides = a.array<2>("strides", c.strides);
  c.padding = a.array<4>("padding", c.padding);
  c.dilation = a.array<2>("dilation", c.dilation);
  c.groups = a.get<int64_t>("groups", 1);
  c.layout = a.layout();
  c.outDtype = a.outDtype();
  return c;
}

ops::Pool2dAttrs poolAttrs(const AttrReader& a) {
  ops::Pool2dAttrs p;
  p.kernel = a.array<2>("kernel", p.kernel);
  p.strides = a.array<2>("strides", p.strides);
  p.dilation = a.array<2>("dilation", p.dilation);
  p.padding = a.array<4>("padding", p.padding);
  p.ceilMode = a.get<bool>("ceil_mode", false);
  p.countIncludePad = a.get<bool>("count_include_pad", false);
  p.layout = a.layout();
  return p;
}

}  // namespace

ops::Conv2dAttrs readConv2dAttrs(const std::string& op, const Attrs& attrs) { return convAttrs(AttrReader(op, attrs)); }

ops::Layout winogradWeightLayout(const Attrs& attrs) {
  std::string layout = AttrReader("winograd_weight_transform", attrs).get<std::string>("kernel_layout", "HWIO");
  if (layout == "HWIO") return ops::Layout::NHWC;
  if (layout == "OIHW") return ops::Layout::NCHW;
  fail("winograd_weight_transform: kernel_layout '{}' is not HWIO or OIHW", layout);
}

namespace {

void registerAll() {
  const auto E = OpPattern::ElemWise, B = OpPattern::Broadcast, I = OpPattern::Injective,
             F = OpPattern::OutEWiseFusable, O = OpPattern::Opaque;
  add("conv2d", F, 2, 2, [](const Inputs& in, const AttrReader& a) { return ops::conv2d(in[0], in[1], convAttrs(a)); });
  add("depthwise_conv2d", F, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::depthwiseConv2d(in[0], in[1], convAttrs(a)); });
  add("conv2d_packed", F, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::conv2dPacked(in[0], in[1], convAttrs(a)); });
  add("conv2d_blocked", F, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::conv2dBlocked(in[0], in[1], convAttrs(a)); });
  add("pack_conv_weight", O, 1, 1,
      [](const Inputs& in, const AttrReader& a) { return ops::packConvWeight(in[0], a.get<int64_t>("block", 32)); });
  add("conv2d_winograd", F, 2, 2, [](const Inputs& in, const AttrReader& a) {
    return ops::conv2dWinograd(in[0], in[1], convAttrs(a), a.get<int>("tile_size", 4));
  });
  add("winograd_weight_transform", O, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::winogradWeightTransform(in[0], a.get<int>("tile_size", 4), a.weightLayout());
  });
  add("conv2d_transpose", F, 2, 2, [](const Inputs& in, const AttrReader& a) {
    ops::Conv2dTransposeAttrs c;
    c.strides = a.array<2>("strides", c.strides);
    c.padding = a.array<4>("padding", c.padding);
    c.outputPadding = a.array<2>("output_padding", c.outputPadding);
    c.dilation = a.array<2>("dilation", c.dilation);
    c.groups = a.get<int64_t>("groups", 1);
    c.outDtype = a.outDtype();
    return ops::conv2dTranspose(in[0], in[1], c);
  });
  add("dense", F, 2, 2, [](const Inputs& in, const AttrReader& a) { return ops::dense(in[0], in[1], a.outDtype()); });
  add("dense_blocked", F, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::denseBlocked(in[0], in[1], a.outDtype()); });
  add("matmul", F, 2, 2, [](const Inputs& in, const AttrReader& a) { return ops::matmul(in[0], in[1], a.outDtype()); });
  add("matmul_packed", F, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::matmulPacked(in[0], in[1], a.outDtype()); });
  add("pack_matmul_weight", O, 1, 1,
      [](const Inputs& in, const AttrReader& a) { return ops::packMatmulWeight(in[0], a.get<int64_t>("block", 32)); });
  add("batch_matmul", F, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::batchMatmul(in[0], in[1], a.outDtype()); });
  add("bias_add", B, 2, 2,
      [](const Inputs& in, const AttrReader& a) { return ops::biasAdd(in[0], in[1], a.get<int>("axis", 1)); });
  add("batch_norm", B, 5, 5, [](const Inputs& in, const AttrReader& a) {
    ops::BatchNormAttrs b;
    b.axis = a.get<int>("axis", 1);
    b.epsilon = a.get<double>("epsilon", 1e-5);
    return ops::batchNorm(in[0], in[1], in[2], in[3], in[4], b);
  });
  using Binary = te::Tensor (*)(const te::Tensor&, const te::Tensor&);
  for (auto [name, fn] : std::vector<std::pair<const char*, Binary>>{{"add", ops::add},
                                                                    {"subtract", ops::subtract},
                                                                    {"multiply", ops::multiply},
                                                                    {"divide", ops::divide},
                                                                    {"maximum", ops::maximum},
                                                                    {"minimum", ops::minimum},
                                                                    {"power", ops::power},
                                                                    {"equal", ops::equal},
                                                                    {"less", ops::less},
                                                                    {"less_equal", ops::lessEqual},
                                                                    {"greater", ops::greater},
                                                                    {"greater_equal", ops::greaterEqual},
                                                                    {"logical_and", ops::logicalAnd},
                                                                    {"logical_or", ops::logicalOr}}) {
    Binary f = fn;
    add(name, B, 2, 2, [f](const Inputs& in, const AttrReader&) { return f(in[0], in[1]); });
  }
  using Unary = te::Tensor (*)(const te::Tensor&);
  for (auto [name, fn] : std::vector<std::pair<const char*, Unary>>{{"relu", ops::relu},
                                                                   {"relu6", ops::relu6},
                                                                   {"sigmoid", ops::sigmoid},
                                                                   {"tanh", ops::tanh},
                                                                   {"hard_swish", ops::hardSwish},
                                                                   {"round", ops::round},
                                                                   {"exp", ops::exp},
                                                                   {"sqrt", ops::sqrt},
                                                                   {"erf", ops::erf},
                                                                   {"is_nan", ops::isNan},
                                                                   {"logical_not", ops::logicalNot}}) {
    Unary f = fn;
    add(name, E, 1, 1, [f](const Inputs& in, const AttrReader&) { return f(in[0]); });
  }
  add("is_inf", E, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::isInf(in[0], a.get<bool>("detect_positive", true), a.get<bool>("detect_negative", true));
  });
  add("where", B, 3, 3, [](const Inputs& in, const AttrReader&) { return ops::where(in[0], in[1], in[2]); });
  add("gelu", E, 1, 1, [](const Inputs& in, const AttrReader& a) {
    std::string approximate = a.get<std::string>("approximate", "none");
    TESSEL_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate '{}' is not none or tanh", approximate);
    return ops::gelu(in[0], approximate == "tanh");
  });
  add("clip", E, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::clip(in[0], a.get<double>("min", 0.0), a.get<double>("max", 6.0));
  });
  add("hard_sigmoid", E, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::hardSigmoid(in[0], a.get<double>("alpha", 0.2), a.get<double>("beta", 0.5));
  });
  add("leaky_relu", E, 1, 1,
      [](const Inputs& in, const AttrReader& a) { return ops::leakyRelu(in[0], a.get<double>("alpha", 0.01)); });
  add("max_pool2d", F, 1, 1, [](const Inputs& in, const AttrReader& a) { return ops::maxPool2d(in[0], poolAttrs(a)); });
  add("avg_pool2d", F, 1, 1, [](const Inputs& in, const AttrReader& a) { return ops::avgPool2d(in[0], poolAttrs(a)); });
  add("global_avg_pool2d", F, 1, 1,
      [](const Inputs& in, const AttrReader& a) { return ops::globalAvgPool2d(in[0], a.layout()); });
  add("global_max_pool2d", F, 1, 1,
      [](const Inputs& in, const AttrReader& a) { return ops::globalMaxPool2d(in[0], a.layout()); });
  add("adaptive_avg_pool2d", F, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::adaptiveAvgPool2d(in[0], a.array<2>("output_size", {1, 1}), a.layout());
  });
  for (auto [name, kind] : std::vector<std::pair<const char*, ops::ReduceKind>>{{"sum", ops::ReduceKind::Sum},
                                                                               {"mean", ops::ReduceKind::Mean},
                                                                               {"max", ops::ReduceKind::Max},
                                                                               {"min", ops::ReduceKind::Min}}) {
    ops::ReduceKind k = kind;
    add(name, OpPattern::CommReduce, 1, 1, [k](const Inputs& in, const AttrReader& a) {
      return ops::reduce(in[0], k, a.get<std::vector<int>>("axis", {}), a.get<bool>("keepdims", false));
    });
  }
  add("layer_norm", O, 2, 3, [](const Inputs& in, const AttrReader& a) {
    std::optional<te::Tensor> bias;
    if (in.size() == 3) bias = in[2];
    return ops::layerNorm(in[0], in[1], bias, a.get<int>("axis", -1), a.get<double>("epsilon", 1e-5));
  });
  add("broadcast_to", B, 1, 1,
      [](const Inputs& in, const AttrReader& a) { return ops::broadcastTo(in[0], a.get<std::vector<int64_t>>("shape", {})); });
  add("tile", I, 1, 1, [](const Inputs& in, const AttrReader& a) { return ops::tile(in[0], a.get<std::vector<int64_t>>("reps", {})); });
  add("take", I, 2, 2, [](const Inputs& in, const AttrReader& a) { return ops::take(in[0], in[1], a.get<int>("axis", 0)); });
  add("softmax", O, 1, 1, [](const Inputs& in, const AttrReader& a) { return ops::softmax(in[0], a.get<int>("axis", -1)); });
  add("concatenate", I, 1, 64,
      [](const Inputs& in, const AttrReader& a) { return ops::concatenate(in, a.get<int>("axis", 1)); });
  add("reshape", I, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::reshape(in[0], a.get<std::vector<int64_t>>("shape", {}));
  });
  add("flatten", I, 1, 1, [](const Inputs& in, const AttrReader&) { return ops::flatten(in[0]); });
  add("transpose", I, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::transpose(in[0], a.get<std::vector<int>>("axes", {}));
  });
  add("strided_slice", I, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::stridedSlice(in[0], a.get<std::vector<int64_t>>("begin", {}), a.get<std::vector<int64_t>>("step", {}),
                             a.get<std::vector<int64_t>>("shape", {}));
  });
  add("pad", I, 1, 1, [](const Inputs& in, const AttrReader& a) {
    ops::PadAttrs p;
    p.before = a.get<std::vector<int64_t>>("before", std::vector<int64_t>(size_t(in[0].ndim()), 0));
    p.after = a.get<std::vector<int64_t>>("after", std::vector<int64_t>(size_t(in[0].ndim()), 0));
    p.value = a.get<double>("value", 0.0);
    return ops::pad(in[0], p);
  });
  add("resize2d", I, 1, 1, [](const Inputs& in, const AttrReader& a) {
    ops::Resize2dAttrs r;
    auto size = a.array<2>("size", {0, 0});
    r.outHeight = size[0];
    r.outWidth = size[1];
    std::string method = a.get<std::string>("method", "nearest");
    TESSEL_CHECK(method == "nearest" || method == "bilinear", "resize2d: method '{}' is not nearest or bilinear", method);
    r.method = method == "nearest" ? ops::ResizeMethod::Nearest : ops::ResizeMethod::Bilinear;
    std::string mode = a.get<std::string>("coordinate_mode", "half_pixel");
    if (mode == "align_corners") r.coordinateMode = ops::CoordinateMode::AlignCorners;
    else if (mode == "half_pixel") r.coordinateMode = ops::CoordinateMode::HalfPixel;
    else if (mode == "pytorch_half_pixel") r.coordinateMode = ops::CoordinateMode::PytorchHalfPixel;
    else if (mode == "asymmetric") r.coordinateMode = ops::CoordinateMode::Asymmetric;
    else fail("resize2d: unknown coordinate_mode '{}'", mode);
    std::string nearest = a.get<std::string>("nearest_mode", "round_prefer_floor");
    if (nearest == "round_prefer_floor") r.nearestMode = ops::NearestMode::RoundPreferFloor;
    else if (nearest == "round_prefer_ceil") r.nearestMode = ops::NearestMode::RoundPreferCeil;
    else if (nearest == "floor") r.nearestMode = ops::NearestMode::Floor;
    else if (nearest == "ceil") r.nearestMode = ops::NearestMode::Ceil;
    else fail("resize2d: unknown nearest_mode '{}'", nearest);
    r.layout = a.layout();
    return ops::resize2d(in[0], r);
  });
  add("cast", E, 1, 1, [](const Inputs& in, const AttrReader& a) {
    return ops::cast(in[0], DataType::parse(a.get<std::string>("dtype", "float32")));
  });
  add("right_shift", E, 1, 1, [](const Inputs& in, const AttrReader& a) { return ops::rightShift(in[0], a.get<int>("bits", 0)); });
  add("left_shift", E, 1, 1, [](const Inputs& in, const AttrReader& a) { return ops::leftShift(in[0], a.get<int>("bits", 0)); });
}

}  // namespace

void registerStandardOps() {
  static std::once_flag once;
  std::call_once(once, registerAll);
}

}  // namespace tessel::graph
