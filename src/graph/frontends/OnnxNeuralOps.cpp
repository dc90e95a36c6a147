// Converters of ONNX's neural-network operators onto the graph's image and dense operators:
// Conv (groups, dilations, auto_pad; depthwise when every channel is its own group),
// ConvTranspose, BatchNormalization, MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool, Gemm, MatMul (batched, with broadcasting), Softmax, LayerNormalization, Resize
// and Upsample. Images are NCHW, as ONNX defines them; the graph's layout pass converts them
// later.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "graph/frontends/OnnxFolding.h"
#include "graph/frontends/OnnxImporter.h"
#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

/// A scalar float32 constant of shape [1] (broadcasts against anything).
runtime::Tensor floatScalar(double v) { return tensorFromValues({1}, DataType::float32(), {v}); }

void requireImage(const NodeView& node, const TensorType& t, const char* what) {
  if (t.shape.size() != 4)
    node.error(fmt::format("{} is {}: only 2-D images (4-D NCHW tensors) are supported", what, t.str()));
}

/// Windows, strides, dilations and paddings beyond this are damage, not models; bounding them
/// keeps the operators' size arithmetic far from overflow.
constexpr int64_t kMaxWindow = int64_t(1) << 20;

/// A two-value attribute (strides, dilations, kernel_shape) of a 2-D window.
std::vector<int64_t> pair(const NodeView& node, const std::string& attribute, std::vector<int64_t> fallback) {
  auto v = node.getInts(attribute, fallback);
  if (v.size() != 2) node.unsupported(attribute, fmt::format("{} values given, 2-D windows take 2", v.size()));
  for (int64_t x : v)
    if (x < 1 || x > kMaxWindow) node.unsupported(attribute, fmt::format("value {} is out of range [1, {}]", x, kMaxWindow));
  return v;
}

/// The window's padding (top, left, bottom, right) from pads or auto_pad.
std::vector<int64_t> windowPadding(const NodeView& node, const std::vector<int64_t>& image, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  std::vector<int64_t> pads = node.getInts("pads", {0, 0, 0, 0});
  if (pads.size() != 4) node.unsupported("pads", fmt::format("{} values given, 2-D windows take 4", pads.size()));
  for (int64_t p : pads)
    if (p < 0 || p > kMaxWindow) node.unsupported("pads", fmt::format("padding {} is out of range [0, {}]", p, kMaxWindow));
  if (autoPad == "NOTSET") return pads;
  if (autoPad == "VALID") return {0, 0, 0, 0};
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") node.unsupported("auto_pad", fmt::format("unknown value '{}'", autoPad));
  // SAME: the output has ceil(in / stride) elements; the odd element of padding goes to the end
  // (SAME_UPPER) or the beginning (SAME_LOWER).
  std::vector<int64_t> out(4);
  for (size_t d = 0; d < 2; ++d) {
    int64_t size = (image[d] + strides[d] - 1) / strides[d];
    int64_t total = std::max<int64_t>(0, (size - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - image[d]);
    int64_t small = total / 2, large = total - small;
    out[d] = autoPad == "SAME_UPPER" ? small : large;
    out[d + 2] = autoPad == "SAME_UPPER" ? large : small;
  }
  return out;
}

/// Adds a bias of one value per channel (input 2 of Conv and ConvTranspose) to `y`.
Value withBias(Importer& im, const NodeView& node, int y) {
  if (!node.hasInput(2)) return im.fromNode(y);
  return im.fromNode(im.addOp(node, "bias_add", {y, im.inputNode(node, 2)}, {{"axis", 1}}, ""));
}

/// The data and weight of Conv and ConvTranspose (both 4-D) and the kernel_shape, which must
/// agree with the weight.
struct ConvOperands {
  TensorType x, w;
  std::vector<int64_t> kernel;
};

ConvOperands convOperands(Importer& im, const NodeView& node) {
  ConvOperands c{im.inputType(node, 0), im.inputType(node, 1), {}};
  requireImage(node, c.x, "the input");
  requireImage(node, c.w, "the weight");
  c.kernel = pair(node, "kernel_shape", {c.w.shape[2], c.w.shape[3]});
  if (c.kernel[0] != c.w.shape[2] || c.kernel[1] != c.w.shape[3])
    node.unsupported("kernel_shape", fmt::format("[{}] differs from the weight's {}", fmt::join(c.kernel, ", "), c.w.str()));
  return c;
}

std::vector<Value> conv(Importer& im, const NodeView& node) {
  auto [x, w, kernel] = convOperands(im, node);
  auto strides = pair(node, "strides", {1, 1}), dilations = pair(node, "dilations", {1, 1});
  auto pads = windowPadding(node, {x.shape[2], x.shape[3]}, kernel, strides, dilations);
  int64_t groups = node.getInt("group", 1), channels = x.shape[1];
  if (groups < 1 || channels % groups != 0 || w.shape[0] % groups != 0)
    node.unsupported("group", fmt::format("{} groups do not divide input {} and weight {}", groups, x.str(), w.str()));
  if (w.shape[1] * groups != channels)
    node.error(fmt::format("the weight {} reads {} input channels in each of {} groups, the input {} has {} channels", w.str(),
                           w.shape[1], groups, x.str(), channels));
  Attrs attrs = {{"strides", strides}, {"padding", pads}, {"dilation", dilations}, {"layout", "NCHW"}};
  int data = im.inputNode(node, 0);
  std::string suffix = node.hasInput(2) ? "conv" : "";
  if (groups > 1 && groups == channels) {
    // Depthwise: the weight [C * M, 1, KH, KW] is, in memory, the depthwise op's [C, M, KH, KW].
    int64_t multiplier = w.shape[0] / channels;
    const Value& weight = im.input(node, 1);
    std::vector<int64_t> shape = {channels, multiplier, w.shape[2], w.shape[3]};
    int wNode = weight.constant ? im.addConstant(node, "weight", reshaped(*weight.constant, shape))
                                : im.addOp(node, "reshape", {im.inputNode(node, 1)}, {{"shape", shape}}, "weight");
    return {withBias(im, node, im.addOp(node, "depthwise_conv2d", {data, wNode}, attrs, suffix))};
  }
  attrs["groups"] = groups;
  return {withBias(im, node, im.addOp(node, "conv2d", {data, im.inputNode(node, 1)}, attrs, suffix))};
}

std::vector<Value> convTranspose(Importer& im, const NodeView& node) {
  auto [x, w, kernel] = convOperands(im, node);
  if (node.has("output_shape")) node.unsupported("output_shape", "give pads and output_padding instead");
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID") node.unsupported("auto_pad", fmt::format("'{}' (NOTSET and VALID are)", autoPad));
  auto strides = pair(node, "strides", {1, 1}), dilations = pair(node, "dilations", {1, 1});
  auto pads = node.getInts("pads", {0, 0, 0, 0});
  if (autoPad == "VALID") pads = {0, 0, 0, 0};
  if (pads.size() != 4) node.unsupported("pads", fmt::format("{} values given, 2-D windows take 4", pads.size()));
  for (int64_t p : pads)
    if (p < 0 || p > kMaxWindow) node.unsupported("pads", fmt::format("padding {} is out of range [0, {}]", p, kMaxWindow));
  auto outputPadding = node.getInts("output_padding", {0, 0});
  if (outputPadding.size() != 2) node.unsupported("output_padding", "2-D windows take 2 values");
  for (size_t d = 0; d < 2; ++d)
    if (outputPadding[d] < 0 || outputPadding[d] >= std::max(strides[d], dilations[d]))
      node.unsupported("output_padding", fmt::format("{} must be below the stride or the dilation", outputPadding[d]));
  int64_t groups = node.getInt("group", 1);
  Attrs attrs = {{"strides", strides},   {"padding", pads},  {"output_padding", outputPadding},
                 {"dilation", dilations}, {"groups", groups}};
  std::string suffix = node.hasInput(2) ? "conv_transpose" : "";
  return {withBias(im, node, im.addOp(node, "conv2d_transpose", {im.inputNode(node, 0), im.inputNode(node, 1)}, attrs, suffix))};
}

std::vector<Value> batchNorm(Importer& im, const NodeView& node) {
  node.ignore("momentum");
  if (node.opset() < 9 && node.getInt("spatial", 1) != 1) node.unsupported("spatial", "only spatial batch norm (1) is");
  if (node.getInt("training_mode", 0) != 0) node.unsupported("training_mode", "tessel compiles inference graphs");
  std::vector<int> inputs;
  for (size_t i = 0; i < 5; ++i) inputs.push_back(im.inputNode(node, i));
  return {im.fromNode(im.addOp(node, "batch_norm", inputs, {{"axis", 1}, {"epsilon", node.getFloat("epsilon", 1e-5f)}}))};
}

Converter pool(const std::string& op) {
  return [op](Importer& im, const NodeView& node) -> std::vector<Value> {
    TensorType x = im.inputType(node, 0);
    requireImage(node, x, "the input");
    auto kernel = pair(node, "kernel_shape", {});
    auto strides = pair(node, "strides", {1, 1});
    // AveragePool has dilations from opset 19 on (the operator refuses those it cannot compute).
    bool dilated = op == "max_pool2d" || node.opset() >= 19;
    auto dilations = dilated ? pair(node, "dilations", {1, 1}) : std::vector<int64_t>{1, 1};
    if (op == "max_pool2d" && node.getInt("storage_order", 0) != 0)
      node.unsupported("storage_order", "only row-major (0) is");
    Attrs attrs = {{"kernel", kernel},
                   {"strides", strides},
                   {"dilation", dilations},
                   {"padding", windowPadding(node, {x.shape[2], x.shape[3]}, kernel, strides, dilations)},
                   {"ceil_mode", node.getInt("ceil_mode", 0) != 0},
                   {"layout", "NCHW"}};
    if (op == "avg_pool2d") attrs["count_include_pad"] = node.getInt("count_include_pad", 0) != 0;
    return {im.fromNode(im.addOp(node, op, {im.inputNode(node, 0)}, attrs))};
  };
}

Converter globalPool(const std::string& op) {
  return [op](Importer& im, const NodeView& node) -> std::vector<Value> {
    requireImage(node, im.inputType(node, 0), "the input");
    return {im.fromNode(im.addOp(node, op, {im.inputNode(node, 0)}, {{"layout", "NCHW"}}))};
  };
}

/// Input `i` transposed ([K, N] -> [N, K]): a constant is transposed here.
int transposedInput(Importer& im, const NodeView& node, size_t i, const std::string& suffix) {
  const Value& v = im.input(node, i);
  if (v.constant) return im.addConstant(node, suffix, transposed(*v.constant, {1, 0}));
  return im.addOp(node, "transpose", {im.inputNode(node, i)}, {{"axes", {1, 0}}}, suffix);
}

std::vector<Value> gemm(Importer& im, const NodeView& node) {
  TensorType a = im.inputType(node, 0), b = im.inputType(node, 1);
  if (a.shape.size() != 2 || b.shape.size() != 2) node.error(fmt::format("operands {} and {} must be 2-D", a.str(), b.str()));
  double alpha = node.getFloat("alpha", 1), beta = node.getFloat("beta", 1);
  bool transA = node.getInt("transA", 0) != 0, transB = node.getInt("transB", 0) != 0;
  bool last = alpha == 1 && !node.hasInput(2);
  int x = transA ? transposedInput(im, node, 0, "a_transposed") : im.inputNode(node, 0);
  // dense computes x * W^T with W [N, K]: transB's B is that W; a constant B is transposed once.
  int y = transB || im.isConstant(node, 1)
              ? im.addOp(node, "dense", {x, transB ? im.inputNode(node, 1) : transposedInput(im, node, 1, "b_transposed")},
                         Attrs::object(), last ? "" : "dense")
              : im.addOp(node, "matmul", {x, im.inputNode(node, 1)}, Attrs::object(), last ? "" : "matmul");
  if (alpha != 1)
    y = im.addOp(node, "multiply", {y, im.addConstant(node, "alpha", floatScalar(alpha))}, Attrs::object(),
                 node.hasInput(2) ? "alpha_scaled" : "");
  if (!node.hasInput(2)) return {im.fromNode(y)};
  const Value& c = im.input(node, 2);
  int cNode;
  if (beta == 1) cNode = im.inputNode(node, 2);
  else if (c.constant)
    cNode = im.addConstant(node, "c_scaled",
                           broadcastArithmetic(*c.constant, floatScalar(beta), [](double u, double v) { return u * v; }, node.label()));
  else cNode = im.addOp(node, "multiply", {im.inputNode(node, 2), im.addConstant(node, "beta", floatScalar(beta))}, Attrs::object(), "c_scaled");
  // A bias of one value per output column is the zoo's bias_add; anything else broadcasts.
  int64_t n = im.graph().node(y).type.shape[1];
  if (c.type.shape == std::vector<int64_t>{n}) return {im.fromNode(im.addOp(node, "bias_add", {y, cNode}, {{"axis", -1}}))};
  return {im.fromNode(im.addOp(node, "add", {y, cNode}))};
}

/// MatMul of stacks: batch_matmul, a vector operand made a matrix and its axis removed after.
std::vector<Value> batchedMatMul(Importer& im, const NodeView& node, const TensorType& a, const TensorType& b) {
  int x = im.inputNode(node, 0), y = im.inputNode(node, 1);
  if (a.shape.size() == 1) x = im.addOp(node, "reshape", {x}, {{"shape", {int64_t(1), a.shape[0]}}}, "a_matrix");
  if (b.shape.size() == 1) y = im.addOp(node, "reshape", {y}, {{"shape", {b.shape[0], int64_t(1)}}}, "b_matrix");
  bool vector = a.shape.size() == 1 || b.shape.size() == 1;
  int product = im.addOp(node, "batch_matmul", {x, y}, Attrs::object(), vector ? "matmul" : "");
  if (!vector) return {im.fromNode(product)};
  std::vector<int64_t> shape = im.graph().node(product).type.shape;
  shape.erase(shape.end() - (a.shape.size() == 1 ? 2 : 1));
  if (a.shape.size() == 1 && b.shape.size() == 1) shape = {1};  // a dot product: one element (the graph has no scalars)
  return {im.fromNode(im.addOp(node, "reshape", {product}, {{"shape", shape}}))};
}

std::vector<Value> matMul(Importer& im, const NodeView& node) {
  TensorType a = im.inputType(node, 0), b = im.inputType(node, 1);
  if (a.shape.size() == 2 && b.shape.size() == 2)
    return {im.fromNode(im.addOp(node, "matmul", {im.inputNode(node, 0), im.inputNode(node, 1)}))};
  // Stacks, [..., M, K] x [K, N] included (a transformer's projections: the weight broadcast
  // over the stack, so that the product's epilogue reads its rows in place).
  return batchedMatMul(im, node, a, b);
}

std::vector<Value> softmax(Importer& im, const NodeView& node) {
  TensorType x = im.inputType(node, 0);
  int64_t rank = int64_t(x.shape.size());
  int64_t axis = node.getInt("axis", node.opset() < 13 ? 1 : -1);
  if (axis < -rank || axis >= rank) node.unsupported("axis", fmt::format("{} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  if (node.opset() >= 13 || axis == rank - 1)
    return {im.fromNode(im.addOp(node, "softmax", {im.inputNode(node, 0)}, {{"axis", axis}}))};
  // Before opset 13 the input is read as a matrix [outer, inner] split at the axis.
  int64_t outer = elementsOf({x.shape.begin(), x.shape.begin() + axis});
  if (outer <= 0 || elementsOf(x.shape) == 0) node.error(fmt::format("the input {} is empty", x.str()));
  int flat = im.addOp(node, "reshape", {im.inputNode(node, 0)}, {{"shape", {outer, elementsOf(x.shape) / outer}}}, "rows");
  int y = im.addOp(node, "softmax", {flat}, {{"axis", 1}}, "softmax");
  return {im.fromNode(im.addOp(node, "reshape", {y}, {{"shape", x.shape}}))};
}

/// The output extent of one resized axis from a scale, which must give a whole number of
/// elements (ONNX floors it, and then maps coordinates with the scale rather than the size
/// ratio; the two agree exactly when the product is whole).
int64_t scaledExtent(const NodeView& node, int64_t in, double scale, size_t axis) {
  double out = double(in) * scale;
  if (!(scale > 0) || !(out <= double(kMaxWindow)) || std::abs(out - std::round(out)) > 1e-6 * std::max(1.0, out) || std::round(out) < 1)
    node.error(fmt::format("scale {} of axis {} gives {} elements from {}: only whole output extents are supported", scale,
                           axis, out, in));
  return int64_t(std::round(out));
}

/// Opset 18's Resize attributes: `axes` (scales or sizes are given for those axes only, the others
/// keep their extent), `keep_aspect_ratio_policy` (sizes as bounds of one common scale; only
/// "stretch", or sizes of one ratio, which it does not change) and `antialias` (a filter
/// widened when shrinking: only where nothing shrinks, where it changes nothing).
void resizeAxes(const NodeView& node, const std::vector<int64_t>& in, std::vector<double>& scales, std::vector<int64_t>& sizes) {
  const int64_t rank = int64_t(in.size());
  std::vector<size_t> axes;  // the axes scales and sizes are given for, in their order
  for (int64_t a : node.getInts("axes", {})) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) node.unsupported("axes", fmt::format("axis {} is out of range for rank {}", a, rank));
    if (std::find(axes.begin(), axes.end(), size_t(axis)) != axes.end()) node.unsupported("axes", fmt::format("axis {} is listed twice", a));
    axes.push_back(size_t(axis));
  }
  if (!node.has("axes"))
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(d);
  if (node.has("axes")) {
    if (!scales.empty() && scales.size() != axes.size()) node.error(fmt::format("{} scales for {} axes", scales.size(), axes.size()));
    if (!sizes.empty() && sizes.size() != axes.size()) node.error(fmt::format("{} sizes for {} axes", sizes.size(), axes.size()));
    std::vector<double> fullScales(in.size(), 1.0);
    std::vector<int64_t> fullSizes(in);
    for (size_t k = 0; k < axes.size(); ++k) {
      if (!scales.empty()) fullScales[axes[k]] = scales[k];
      if (!sizes.empty()) fullSizes[axes[k]] = sizes[k];
    }
    if (!scales.empty()) scales = fullScales;
    if (!sizes.empty()) sizes = fullSizes;
  }
  std::string policy = node.getString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    node.unsupported("keep_aspect_ratio_policy", fmt::format("'{}'", policy));
  if (policy != "stretch" && sizes.size() == in.size()) {
    // The policy makes one scale of the sizes (their least or greatest ratio to the input): sizes
    // of one ratio already are that, other sizes would need the scale's rounding rules.
    for (size_t d : axes)
      if (sizes[d] * in[axes[0]] != in[d] * sizes[axes[0]])
        node.unsupported("keep_aspect_ratio_policy", fmt::format("'{}' with sizes {} of different ratios to the input {}", policy,
                                                                 runtime::formatShape(sizes), runtime::formatShape(in)));
  }
  if (node.getInt("antialias", 0) != 0) {
    bool shrinks = false;
    for (size_t d = 0; d < in.size(); ++d)
      shrinks = shrinks || (sizes.size() == in.size() && sizes[d] < in[d]) || (scales.size() == in.size() && scales[d] < 1.0);
    if (shrinks) node.unsupported("antialias", "only where no axis shrinks (where it changes nothing)");
  }
}

/// Resize (opset 10 and 11+) and Upsample: nearest or bilinear resizing of H and W.
std::vector<Value> resize(Importer& im, const NodeView& node) {
  TensorType x = im.inputType(node, 0);
  requireImage(node, x, "the input");
  bool modern = node.opType() == "Resize" && node.opset() >= 11;
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (node.opType() == "Upsample" && node.opset() < 9) {
    auto f = node.getFloats("scales");
    scales.assign(f.begin(), f.end());
  } else {
    size_t scalesInput = modern ? 2 : 1;
    if (node.hasInput(scalesInput)) scales = numericValues(im.constantInput(node, scalesInput, "scales"), node.label());
    if (modern && node.hasInput(3)) sizes = intValues(im.constantInput(node, 3, "sizes"), node.label() + ": sizes");
  }
  if (modern && node.opset() >= 18) resizeAxes(node, x.shape, scales, sizes);
  std::vector<int64_t> out;
  if (!sizes.empty()) {
    if (sizes.size() != 4) node.error(fmt::format("{} sizes for a 4-D input", sizes.size()));
    out = sizes;
  } else {
    if (scales.size() != 4) node.error(fmt::format("{} scales for a 4-D input (give scales or sizes)", scales.size()));
    for (size_t d = 0; d < 4; ++d) out.push_back(scaledExtent(node, x.shape[d], scales[d], d));
  }
  if (out[0] != x.shape[0] || out[1] != x.shape[1]) node.error("only the height and width can be resized");
  if (out[2] < 1 || out[3] < 1 || out[2] > kMaxWindow || out[3] > kMaxWindow)
    node.error(fmt::format("output size {}x{} is out of range [1, {}]", out[2], out[3], kMaxWindow));
  std::string mode = node.getString("mode", "nearest");
  if (mode != "nearest" && mode != "linear") node.unsupported("mode", fmt::format("'{}' (nearest and linear are)", mode));
  Attrs attrs = {{"size", {out[2], out[3]}}, {"method", mode == "nearest" ? "nearest" : "bilinear"}, {"layout", "NCHW"}};
  if (modern) {
    std::string coordinates = node.getString("coordinate_transformation_mode", "half_pixel");
    if (coordinates != "half_pixel" && coordinates != "pytorch_half_pixel" && coordinates != "align_corners" &&
        coordinates != "asymmetric")
      node.unsupported("coordinate_transformation_mode", fmt::format("'{}'", coordinates));
    attrs["coordinate_mode"] = coordinates;
    attrs["nearest_mode"] = node.getString("nearest_mode", "round_prefer_floor");
    if (attrs["nearest_mode"] != "round_prefer_floor" && attrs["nearest_mode"] != "round_prefer_ceil" &&
        attrs["nearest_mode"] != "floor" && attrs["nearest_mode"] != "ceil")
      node.unsupported("nearest_mode", fmt::format("'{}'", attrs["nearest_mode"].get<std::string>()));
    if (node.getInt("exclude_outside", 0) != 0) node.unsupported("exclude_outside", "only 0 is");
    node.ignore("cubic_coeff_a");        // cubic mode only, refused above
    node.ignore("extrapolation_value");  // tf_crop_and_resize only, refused above
  } else {
    // Opset 10's Resize and Upsample map coordinates asymmetrically; nearest truncates when
    // enlarging (and rounds up when shrinking), as ONNX Runtime does.
    attrs["coordinate_mode"] = "asymmetric";
    attrs["nearest_mode"] = out[2] >= x.shape[2] && out[3] >= x.shape[3] ? "floor" : "ceil";
  }
  return {im.fromNode(im.addOp(node, "resize2d", {im.inputNode(node, 0)}, attrs))};
}

}  // namespace

/// LayerNormalization (opset 17): over the axes from `axis` on; the optional Mean and
/// InvStdDev outputs (training statistics) are not produced.
std::vector<Value> layerNormalization(Importer& im, const NodeView& node) {
  int64_t rank = int64_t(im.inputType(node, 0).shape.size());
  int64_t axis = node.getInt("axis", -1);
  if (axis < -rank || axis >= rank) node.unsupported("axis", fmt::format("{} is out of range for rank {}", axis, rank));
  if (node.getInt("stash_type", 1) != 1) node.unsupported("stash_type", "only float32 statistics (1) are");
  std::vector<int> inputs = {im.inputNode(node, 0), im.inputNode(node, 1)};
  if (node.hasInput(2)) inputs.push_back(im.inputNode(node, 2));
  Attrs attrs = {{"axis", axis}, {"epsilon", node.getFloat("epsilon", 1e-5f)}};
  return {im.fromNode(im.addOp(node, "layer_norm", inputs, attrs))};
}

void addNeuralNetworkConverters(ConverterTable& t) {
  t["LayerNormalization"] = layerNormalization;
  t["Conv"] = conv;
  t["ConvTranspose"] = convTranspose;
  t["BatchNormalization"] = batchNorm;
  t["MaxPool"] = pool("max_pool2d");
  t["AveragePool"] = pool("avg_pool2d");
  t["GlobalAveragePool"] = globalPool("global_avg_pool2d");
  t["GlobalMaxPool"] = globalPool("global_max_pool2d");
  t["Gemm"] = gemm;
  t["MatMul"] = matMul;
  t["Softmax"] = softmax;
  t["Resize"] = resize;
  t["Upsample"] = resize;
}

}  // namespace tessel::graph::onnx_import
