// int8 quantization as TVM's relay.quantize does it with the settings the VTA tutorials use
// (global_scale calibration, power-of-two weight scales): the annotate rules of
// tvm@v0.18.0:python/tvm/relay/quantize/_annotate.py decide which values become integers, the
// realize rules of tvm@v0.18.0:src/relay/quantize/realize.cc say how, and the scales of
// tvm@v0.18.0:python/tvm/relay/quantize/_calibrate.py (_set_params) say by how much.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

/// TVM's QAnnotateKind: an 8-bit operand of a convolution (INPUT) or an int32 result (ACTIVATION).
enum class Field { Input, Activation };

/// A value of the quantized network: node `id` of the new graph holds round(real / scale).
struct Quantized {
  int id = -1;
  double scale = 1;
  Field field = Field::Input;
};

/// 8-bit signed fields keep 7 valid bits: scales divide the range by 2^7 and values clip to
/// +-127 (_set_params: valid_bit = nbit - sign, clip +-(2^valid_bit - 1)).
constexpr double kValidRange = 128;
constexpr double kClip = 127;

/// The power2 weight scale: 2^ceil(log2 max|w|), 1 for an all-zero tensor. Computed as
/// _calibrate.py's _power2_scale does (the float32 maximum, log(v) / log(2) in double).
double powerOfTwoScale(const runtime::Tensor& t) {
  float largest = 0;
  const float* v = t.dataAs<float>();
  for (int64_t i = 0; i < t.numel(); ++i) largest = std::max(largest, std::fabs(v[i]));
  if (!(largest > 0)) return 1.0;
  return std::pow(2.0, std::ceil(std::log(double(largest)) / std::log(2.0)));
}

/// Quantizing a real value: x * (1 / scale) in float32, rounded half away from zero (TVM's
/// `round`), clipped to +-127 (QuantizeRealize, "quantize from real").
double quantizeReal(float x, double scale) {
  float inverse = 1.0f / float(scale);
  return std::clamp(double(std::round(x * inverse)), -kClip, kClip);
}

/// log2(ratio) when the ratio of two scales is a power of two; Error naming the node otherwise
/// (TVM would multiply by a fixed-point number, which this pass does not do).
int shiftBetween(double from, double to, const std::string& node) {
  double bits = std::log2(from / to);
  TESSEL_CHECK(bits == std::floor(bits) && std::fabs(bits) < 31,
               "quantize: node '{}': scales {} and {} differ by a factor that is not a power of two below 2^31", node, from,
               to);
  return int(bits);
}

runtime::Tensor scalar(DataType dtype, double value) {
  auto t = runtime::Tensor::empty({}, dtype);
  if (dtype == DataType::float32()) *t.dataAs<float>() = float(value);
  else *t.dataAs<int32_t>() = int32_t(value);
  return t;
}

const std::set<std::string> kDataMovement{"reshape", "flatten", "transpose", "strided_slice"};

class Quantizer {
 public:
  Quantizer(const Graph& graph, const QuantizeOptions& options)
      : graph_(graph), options_(options), rw_(graph), quantized_(graph.nodes().size()), asInput_(graph.nodes().size()),
        dequantized_(graph.nodes().size(), -1) {
    inputScale_ = options.globalScale / kValidRange;
  }

  Graph run() {
    int convolutions = 0;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const Node& n = graph_.nodes()[i];
      if (n.kind != NodeKind::Op) continue;
      // TVM counts conv2d layers in the order its annotation visits them (post-order from the
      // output); node order is a topological order too, and both start with the convolution
      // nearest the input, the one the usual skip_conv_layers [0] names.
      bool skipped = false;
      if (n.op == "conv2d") {
        skipped = std::count(options_.skipConvLayers.begin(), options_.skipConvLayers.end(), convolutions) > 0;
        ++convolutions;
      }
      if (n.op == "dense") skipped = options_.skipDense;
      try {
        if (stopped_ || skipped || !quantizeNode(int(i))) copyInFloat(int(i));
      } catch (const Error& e) {
        throw e.withContext("quantize: node '" + n.name + "' (" + n.op + ")");
      }
    }
    for (int o : graph_.outputs()) rw_.setMapping(o, floatValue(o));
    return rw_.finish();
  }

 private:
  Graph& out() { return rw_.graph(); }
  const Node& oldNode(int id) const { return graph_.node(id); }
  DataType dtypeOf(int newId) { return out().node(newId).type.dtype; }

  int op(const std::string& name, std::vector<int> inputs, Attrs attrs, const std::string& base) {
    return out().addOp(name, std::move(inputs), std::move(attrs), rw_.freshName(base));
  }
  int constant(const std::string& base, runtime::Tensor value) { return out().addConstant(rw_.freshName(base), std::move(value)); }
  int cast(int id, DataType dtype, const std::string& base) {
    return dtypeOf(id) == dtype ? id : op("cast", {id}, {{"dtype", dtype.str()}}, base);
  }

  /// Old node `id` as a float value of the new graph: itself, or its integers dequantized
  /// (cast to float32, times the scale: QRealizeIntExprNode::Realize), once.
  int floatValue(int id) {
    if (!quantized_[size_t(id)]) return rw_.mapped(id);
    int& d = dequantized_[size_t(id)];
    if (d < 0) {
      const Quantized& q = *quantized_[size_t(id)];
      const std::string& name = oldNode(id).name;
      int asFloat = cast(q.id, DataType::float32(), name + "_float");
      d = op("multiply", {asFloat, constant(name + "_scale", scalar(DataType::float32(), q.scale))}, Attrs::object(),
             name + "_dequantized");
    }
    return d;
  }

  /// An operator left in float: its quantized inputs are dequantized first.
  void copyInFloat(int id) {
    const Node& n = oldNode(id);
    std::vector<int> inputs;
    for (int in : n.inputs) inputs.push_back(floatValue(in));
    rw_.setMapping(id, out().addOp(n.op, inputs, n.attrs, n.name));
  }

  /// Old node `id` as an INPUT field: int8 at the global input scale. One node per value, as
  /// TVM shares one simulated quantize per (value, kind).
  Quantized input(int id) {
    auto& cached = asInput_[size_t(id)];
    if (cached) return *cached;
    const std::string& name = oldNode(id).name;
    Quantized result{-1, inputScale_, Field::Input};
    const auto& q = quantized_[size_t(id)];
    if (q && q->field == Field::Input) {
      result = *q;
    } else if (q) {
      result.id = requantize(*q, inputScale_, name);
    } else {
      int x = rw_.mapped(id);
      TESSEL_CHECK(dtypeOf(x) == DataType::float32(), "value '{}' is {}, not float32", name, dtypeOf(x).str());
      float inverse = 1.0f / float(inputScale_);
      int scaled = op("multiply", {x, constant(name + "_inverse_scale", scalar(DataType::float32(), inverse))}, Attrs::object(),
                      name + "_scaled");
      int rounded = op("round", {scaled}, Attrs::object(), name + "_rounded");
      int clipped = op("clip", {rounded}, {{"min", -kClip}, {"max", kClip}}, name + "_clipped");
      result.id = cast(clipped, DataType::int8(), name + "_int8");
    }
    result.id = cast(result.id, DataType::int8(), name + "_int8");
    cached = result;
    return result;
  }

  /// Integers at `from.scale` brought to `scale` and 8 bits: a right shift rounding half up
  /// (round_for_shift adds half first), or a left shift, then the clip and the cast to int8.
  int requantize(const Quantized& from, double scale, const std::string& name) {
    int shift = shiftBetween(scale, from.scale, name);
    int x = cast(from.id, DataType::int32(), name + "_int32");
    if (shift > 0) {
      if (options_.roundForShift)
        x = op("add", {x, constant(name + "_round_bias", scalar(DataType::int32(), double(int64_t(1) << (shift - 1))))},
               Attrs::object(), name + "_rounding");
      x = op("right_shift", {x}, {{"bits", shift}}, name + "_shifted");
    } else if (shift < 0) {
      x = op("left_shift", {x}, {{"bits", -shift}}, name + "_shifted");
    }
    int clipped = op("clip", {x}, {{"min", -kClip}, {"max", kClip}}, name + "_clipped");
    return cast(clipped, DataType::int8(), name + "_int8");
  }

  /// A constant as a WEIGHT field: int8 values at its power-of-two scale.
  std::pair<runtime::Tensor, double> weight(int id) {
    const runtime::Tensor* value = constantValue(graph_, id);
    TESSEL_CHECK(value, "operand '{}' must be a constant to be quantized as a weight", oldNode(id).name);
    TESSEL_CHECK(value->dtype() == DataType::float32(), "weight '{}' is {}, not float32", oldNode(id).name, value->dtype().str());
    double scale = powerOfTwoScale(*value) / kValidRange;
    auto q = runtime::Tensor::empty(value->shape(), DataType::int8());
    for (int64_t i = 0; i < value->numel(); ++i) q.dataAs<int8_t>()[i] = int8_t(quantizeReal(value->dataAs<float>()[i], scale));
    return {q, scale};
  }

  /// conv2d and dense: int8 data at the input scale, int8 weights, int32 results at the
  /// product of the scales (Conv2dRealize, DenseRealize).
  void multiplyAccumulate(int id) {
    const Node& n = oldNode(id);
    Quantized data = input(n.inputs[0]);
    auto [w, weightScale] = weight(n.inputs[1]);
    int weightId = constant(oldNode(n.inputs[1]).name + "_int8", std::move(w));
    Attrs attrs = n.attrs;
    attrs["out_dtype"] = "int32";
    int result = out().addOp(n.op, {data.id, weightId}, attrs, n.name);
    set(id, {result, data.scale * weightScale, Field::Activation});
  }

  /// add: the annotate rule picks the fields, then both operands become int32 at the smaller
  /// scale by left shifts (AddRealize, UnifyDTypeScale).
  void add(int id) {
    const Node& n = oldNode(id);
    int lhs = n.inputs[0], rhs = n.inputs[1];
    const auto &ql = quantized_[size_t(lhs)], &qr = quantized_[size_t(rhs)];
    std::optional<Quantized> left = ql, right = qr;
    std::optional<std::pair<runtime::Tensor, double>> constantRight;
    if (!ql) left = input(lhs);
    if (!qr) {
      if (constantValue(graph_, rhs)) constantRight = weight(rhs);
      else right = input(rhs);
    }
    if (ql && qr && ql->field == Field::Activation && qr->field == Field::Activation) right = input(rhs);
    double rightScale = constantRight ? constantRight->second : right->scale;
    double scale = std::min(left->scale, rightScale);
    int a = shiftedUp(*left, scale, oldNode(lhs).name);
    int b;
    if (constantRight) {
      int shift = shiftBetween(rightScale, scale, oldNode(rhs).name);
      const runtime::Tensor& q = constantRight->first;
      auto wide = runtime::Tensor::empty(q.shape(), DataType::int32());
      // The shift of a folded constant: int32 arithmetic that wraps, as the kernel's would.
      for (int64_t i = 0; i < q.numel(); ++i)
        wide.dataAs<int32_t>()[i] = int32_t(uint32_t(int32_t(q.dataAs<int8_t>()[i])) << shift);
      b = constant(oldNode(rhs).name + "_int32", std::move(wide));
    } else {
      b = shiftedUp(*right, scale, oldNode(rhs).name);
    }
    set(id, {out().addOp("add", {a, b}, n.attrs, n.name), scale, Field::Activation});
  }

  /// Integers at q.scale as int32 at the smaller `scale` (MulAndDiv: a left shift).
  int shiftedUp(const Quantized& q, double scale, const std::string& name) {
    int x = cast(q.id, DataType::int32(), name + "_int32");
    int shift = shiftBetween(q.scale, scale, name);
    return shift == 0 ? x : op("left_shift", {x}, {{"bits", shift}}, name + "_aligned");
  }

  /// clip's real bounds in the integer domain (ClipRealize), truncated as a cast to the
  /// integer type would and kept inside it.
  void clip(int id, const Quantized& q) {
    const Node& n = oldNode(id);
    DataType t = dtypeOf(q.id);
    double lowest = t == DataType::int8() ? -128.0 : double(std::numeric_limits<int32_t>::lowest());
    double highest = t == DataType::int8() ? 127.0 : double(std::numeric_limits<int32_t>::max());
    auto bound = [&](const char* key, double fallback) {
      return std::clamp(std::trunc(n.attrs.value(key, fallback) / q.scale), lowest, highest);
    };
    int result = out().addOp("clip", {q.id}, {{"min", bound("min", 0.0)}, {"max", bound("max", 6.0)}}, n.name);
    set(id, {result, q.scale, q.field});
  }

  /// The rules of the operators TVM quantizes; false: the operator runs in float.
  bool quantizeNode(int id) {
    const Node& n = oldNode(id);
    auto anyQuantized = [&] {
      for (int in : n.inputs)
        if (quantized_[size_t(in)]) return true;
      return false;
    };
    if (n.op == "conv2d" || n.op == "dense") {
      multiplyAccumulate(id);
      return true;
    }
    if (!anyQuantized()) return false;
    const Quantized& q = *quantized_[size_t(n.inputs[0])];
    if (n.op == "add") {
      add(id);
    } else if (n.op == "relu" || kDataMovement.count(n.op)) {
      set(id, {out().addOp(n.op, {q.id}, n.attrs, n.name), q.scale, q.field});
    } else if (n.op == "clip") {
      clip(id, q);
    } else if (n.op == "max_pool2d") {
      Quantized in = input(n.inputs[0]);
      set(id, {out().addOp(n.op, {in.id}, n.attrs, n.name), in.scale, Field::Input});
    } else if (n.op == "global_avg_pool2d") {
      // Averaged in int32 (AvgPoolRealize); quantization stops after it, so its consumers see
      // it dequantized.
      int pooled = out().addOp(n.op, {cast(q.id, DataType::int32(), n.name + "_int32")}, n.attrs, n.name);
      set(id, {pooled, q.scale, Field::Activation});
      stopped_ = true;
    } else {
      return false;
    }
    return true;
  }

  void set(int id, Quantized q) {
    quantized_[size_t(id)] = q;
    rw_.setMapping(id, q.id);
  }

  const Graph& graph_;
  const QuantizeOptions& options_;
  GraphRewriter rw_;
  std::vector<std::optional<Quantized>> quantized_;  // per old node
  std::vector<std::optional<Quantized>> asInput_;    // per old node
  std::vector<int> dequantized_;                     // per old node
  double inputScale_ = 1;
  bool stopped_ = false;
};

}  // namespace

void QuantizeOptions::validate() const {
  TESSEL_CHECK(globalScale > 0 && std::log2(globalScale) == std::floor(std::log2(globalScale)),
               "quantize: global scale {} is not a power of two (requantization is by shifts only)", globalScale);
  for (int layer : skipConvLayers) TESSEL_CHECK(layer >= 0, "quantize: skipped conv2d layer {} is negative", layer);
}

Graph quantize(const Graph& graph, const QuantizeOptions& options) {
  options.validate();
  return Quantizer(graph, options).run();
}

}  // namespace tessel::graph
