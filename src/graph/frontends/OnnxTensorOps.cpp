// Converters of the ONNX operators that create, reshape and move tensors: Constant,
// ConstantOfShape, Identity, Dropout, Shape, Gather (constant or run-time indices),
// GatherElements, Slice, Concat, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Cast, Pad,
// Split, Expand, Tile, and Range and CumSum (of constants). On constants they are evaluated
// here (shape arithmetic); on graph values they become graph operators (reshape, flatten,
// transpose, concatenate, strided_slice, pad, cast, take, broadcast_to, tile).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/frontends/OnnxFolding.h"
#include "graph/frontends/OnnxImporter.h"
#include "graph/frontends/OnnxTensor.h"
#include "graph/OpRegistry.h"
#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

/// A possibly negative axis of a tensor of `rank` dimensions, checked.
int64_t axisOf(const NodeView& node, int64_t axis, size_t rank, const char* attribute = "axis") {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) node.unsupported(attribute, fmt::format("axis {} is out of range for rank {}", axis, rank));
  return axis < 0 ? axis + r : axis;
}

/// Input `i` (or everything a constant-only node reads) under a new shape.
Value reshapeValue(Importer& im, const NodeView& node, size_t i, const std::vector<int64_t>& shape) {
  const Value& v = im.input(node, i);
  TESSEL_CHECK(elementsOf(shape) == elementsOf(v.type.shape), "{}: cannot reshape {} to {}", node.label(),
               runtime::formatShape(v.type.shape), runtime::formatShape(shape));
  if (v.constant) return Importer::fromConstant(reshaped(*v.constant, shape));
  return im.fromNode(im.addOp(node, "reshape", {im.inputNode(node, i)}, {{"shape", shape}}));
}

/// Axes from the attribute (before `inputOpset`) or from input 1 (from it on), as ONNX moved
/// Squeeze's and Unsqueeze's axes from an attribute to an input in opset 13.
std::optional<std::vector<int64_t>> axesOf(Importer& im, const NodeView& node, int64_t inputOpset) {
  if (node.opset() < inputOpset) {
    if (!node.has("axes")) return std::nullopt;
    return node.getInts("axes");
  }
  if (!node.hasInput(1)) return std::nullopt;
  return intValues(im.constantInput(node, 1, "axes"), node.label() + ": axes");
}

std::vector<Value> constant(Importer& im, const NodeView& node) {
  auto scalar = [](DataType dtype, std::vector<double> values, bool vector) {
    std::vector<int64_t> shape;
    if (vector) shape.push_back(int64_t(values.size()));
    return Importer::fromConstant(tensorFromValues(shape, dtype, values));
  };
  if (node.has("value")) return {Importer::fromConstant(tensorFromProto(node.getTensor("value"), node.label(), im.externalData()))};
  if (node.has("value_float")) return {scalar(DataType::float32(), {node.getFloat("value_float", 0)}, false)};
  if (node.has("value_int")) return {scalar(DataType::int64(), {double(node.getInt("value_int", 0))}, false)};
  if (node.has("value_floats")) {
    auto f = node.getFloats("value_floats");
    return {scalar(DataType::float32(), std::vector<double>(f.begin(), f.end()), true)};
  }
  if (node.has("value_ints")) return {Importer::fromConstant(int64Tensor(node.getInts("value_ints")))};
  for (const char* other : {"sparse_value", "value_string", "value_strings"})
    if (node.has(other)) node.unsupported(other, "only numeric tensors are supported");
  node.error("has no value");
}

std::vector<Value> constantOfShape(Importer& im, const NodeView& node) {
  auto shape = intValues(im.constantInput(node, 0, "shape"), node.label() + ": shape");
  for (int64_t d : shape)
    if (d < 0 || d > (int64_t(1) << 31)) node.error(fmt::format("invalid extent {} in shape", d));
  runtime::Tensor value = tensorFromValues({1}, DataType::float32(), {0.0});
  if (node.has("value")) value = tensorFromProto(node.getTensor("value"), node.label() + " value", im.externalData());
  if (value.numel() != 1) node.unsupported("value", "it must hold one element");
  auto one = numericValues(value, node.label());
  return {Importer::fromConstant(filledTensor(shape, value.dtype(), one[0]))};
}

std::vector<Value> identity(Importer& im, const NodeView& node) { return {im.input(node, 0)}; }

std::vector<Value> dropout(Importer& im, const NodeView& node) {
  node.ignore("ratio");
  node.ignore("seed");
  if (node.opset() >= 12 && node.hasInput(2)) {
    auto training = numericValues(im.constantInput(node, 2, "training_mode"), node.label());
    if (!training.empty() && training[0] != 0) node.error("training_mode is true: tessel compiles inference graphs");
  }
  return {im.input(node, 0)};
}

std::vector<Value> shape(Importer& im, const NodeView& node) {
  const auto& s = im.inputType(node, 0).shape;
  int64_t rank = int64_t(s.size());
  int64_t start = node.getInt("start", 0), end = node.getInt("end", rank);
  auto clampAxis = [&](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t(0), rank); };
  start = clampAxis(start);
  end = clampAxis(end);
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(s[size_t(d)]);
  return {Importer::fromConstant(int64Tensor(dims))};
}

/// Gather of run-time data with constant indices: one strided slice along the axis when the
/// indices step evenly (a single index, a range, a reversal), else one slice per index joined;
/// the indices' own shape replaces the axis.
Value gatherSlices(Importer& im, const NodeView& node, int64_t axis, const std::vector<int64_t>& idx,
                   const std::vector<int64_t>& indexShape) {
  const auto& in = im.inputType(node, 0).shape;
  if (idx.empty()) node.error("no indices: empty results are not supported");
  if (indexShape.size() > 1) node.error("indices of more than one dimension on run-time data are not supported");
  size_t rank = in.size();
  auto slice = [&](int64_t first, int64_t step, int64_t count, const std::string& suffix) {
    std::vector<int64_t> begin(rank, 0), steps(rank, 1), shape = in;
    begin[size_t(axis)] = first;
    steps[size_t(axis)] = step;
    shape[size_t(axis)] = count;
    return im.addOp(node, "strided_slice", {im.inputNode(node, 0)}, {{"begin", begin}, {"step", steps}, {"shape", shape}}, suffix);
  };
  int64_t step = idx.size() > 1 ? idx[1] - idx[0] : 1;
  bool even = step != 0;
  for (size_t k = 1; even && k < idx.size(); ++k) even = idx[k] - idx[k - 1] == step;
  int joined;
  if (even) {
    joined = slice(idx[0], step, int64_t(idx.size()), "slice");
  } else {
    std::vector<int> parts;
    for (size_t k = 0; k < idx.size(); ++k) parts.push_back(slice(idx[k], 1, 1, fmt::format("slice{}", k)));
    joined = im.addOp(node, "concatenate", parts, {{"axis", axis}}, "joined");
  }
  std::vector<int64_t> shape(in.begin(), in.begin() + axis);
  shape.insert(shape.end(), indexShape.begin(), indexShape.end());
  shape.insert(shape.end(), in.begin() + axis + 1, in.end());
  return im.fromNode(im.addOp(node, "reshape", {joined}, {{"shape", shape}}));
}

std::vector<Value> gather(Importer& im, const NodeView& node) {
  const Value& data = im.input(node, 0);
  if (!im.isConstant(node, 1)) {
    // Run-time indices (an embedding lookup of token ids): the graph's take.
    if (data.type.shape.empty()) node.error("Gather on a scalar");
    int64_t axis = axisOf(node, node.getInt("axis", 0), data.type.shape.size());
    return {im.fromNode(im.addOp(node, "take", {im.inputNode(node, 0), im.inputNode(node, 1)}, {{"axis", axis}}))};
  }
  auto indices = im.constantInput(node, 1, "indices");
  auto idx = intValues(indices, node.label() + ": indices");
  if (data.type.shape.empty()) node.error("Gather on a scalar");
  int64_t axis = axisOf(node, node.getInt("axis", 0), data.type.shape.size());
  int64_t extent = data.type.shape[size_t(axis)];
  for (int64_t& i : idx) {
    if (i < -extent || i >= extent) node.error(fmt::format("index {} is out of range for extent {}", i, extent));
    if (i < 0) i += extent;
  }
  if (!data.constant) return {gatherSlices(im, node, axis, idx, indices.shape())};
  const auto& in = *data.constant;
  std::vector<int64_t> outShape(in.shape().begin(), in.shape().begin() + axis);
  outShape.insert(outShape.end(), indices.shape().begin(), indices.shape().end());
  outShape.insert(outShape.end(), in.shape().begin() + axis + 1, in.shape().end());
  auto strides = stridesOf(in.shape());
  size_t indexRank = indices.shape().size();
  std::vector<int64_t> indexStrides = stridesOf(indices.shape());
  return {Importer::fromConstant(moved(in, outShape, [&](const std::vector<int64_t>& o) {
    int64_t flat = 0;
    for (int64_t d = 0; d < axis; ++d) flat += o[size_t(d)] * strides[size_t(d)];
    int64_t which = 0;
    for (size_t k = 0; k < indexRank; ++k) which += o[size_t(axis) + k] * indexStrides[k];
    flat += idx[size_t(which)] * strides[size_t(axis)];
    for (size_t d = size_t(axis) + 1; d < strides.size(); ++d) flat += o[d + indexRank - 1] * strides[d];
    return flat;
  }))};
}

/// GatherElements of constants (what exporters write for buffers indexed by position ids):
/// out[i] = data[i with index[i] at the axis], folded here; on run-time values it is refused.
std::vector<Value> gatherElements(Importer& im, const NodeView& node) {
  const auto& data = im.constantInput(node, 0, "data");
  auto indices = im.constantInput(node, 1, "indices");
  auto idx = intValues(indices, node.label() + ": indices");
  const auto& shape = data.shape();
  if (indices.shape().size() != shape.size())
    node.error(fmt::format("indices of rank {} for data of rank {}", indices.shape().size(), shape.size()));
  int64_t axis = axisOf(node, node.getInt("axis", 0), shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    if (int64_t(d) != axis && indices.shape()[d] > shape[d])
      node.error(fmt::format("indices {} exceed the data {} on axis {}", runtime::formatShape(indices.shape()), runtime::formatShape(shape), d));
  int64_t extent = shape[size_t(axis)];
  for (int64_t& i : idx) {
    if (i < -extent || i >= extent) node.error(fmt::format("index {} is out of range for extent {}", i, extent));
    if (i < 0) i += extent;
  }
  auto strides = stridesOf(shape), indexStrides = stridesOf(indices.shape());
  checkConstantSize(indices.shape());
  return {Importer::fromConstant(moved(data, indices.shape(), [&](const std::vector<int64_t>& o) {
    int64_t flat = 0, which = 0;
    for (size_t d = 0; d < o.size(); ++d) which += o[d] * indexStrides[d];
    for (size_t d = 0; d < o.size(); ++d) flat += (int64_t(d) == axis ? idx[size_t(which)] : o[d]) * strides[d];
    return flat;
  }))};
}

/// Expand: the input broadcast with a constant shape (numpy's rules, either side may be larger).
std::vector<Value> expand(Importer& im, const NodeView& node) {
  const Value& x = im.input(node, 0);
  auto shape = intValues(im.constantInput(node, 1, "shape"), node.label() + ": shape");
  for (int64_t e : shape)
    if (e < 0) node.error(fmt::format("shape {} has a negative extent", runtime::formatShape(shape)));
  auto out = ops::broadcastShape(node.label(), x.type.shape, shape);
  elementsOf(out);  // an Error past 2^40 elements: a hostile shape must not overflow later sizes
  if (out == x.type.shape) return {x};
  if (!x.constant) return {im.fromNode(im.addOp(node, "broadcast_to", {im.inputNode(node, 0)}, {{"shape", shape}}))};
  const auto& in = x.type.shape;
  auto strides = stridesOf(in);
  size_t offset = out.size() - in.size();
  return {Importer::fromConstant(moved(*x.constant, out, [&](const std::vector<int64_t>& o) {
    int64_t flat = 0;
    for (size_t d = 0; d < in.size(); ++d) flat += (in[d] == 1 ? 0 : o[d + offset]) * strides[d];
    return flat;
  }))};
}

/// Tile: repeats of each axis, a constant input.
std::vector<Value> tile(Importer& im, const NodeView& node) {
  const Value& x = im.input(node, 0);
  auto repeats = intValues(im.constantInput(node, 1, "repeats"), node.label() + ": repeats");
  const auto& in = x.type.shape;
  if (repeats.size() != in.size()) node.error(fmt::format("{} repeats for rank {}", repeats.size(), in.size()));
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 1) node.error(fmt::format("repeat {} of axis {} is not positive", repeats[d], d));
    if (repeats[d] > (int64_t(1) << 40) / std::max<int64_t>(in[d], 1))
      node.error(fmt::format("repeat {} of axis {} ({} elements) is too large", repeats[d], d, in[d]));
    out.push_back(in[d] * repeats[d]);
  }
  elementsOf(out);  // an Error past 2^40 elements
  if (!x.constant) return {im.fromNode(im.addOp(node, "tile", {im.inputNode(node, 0)}, {{"reps", repeats}}))};
  auto strides = stridesOf(in);
  return {Importer::fromConstant(moved(*x.constant, out, [&](const std::vector<int64_t>& o) {
    int64_t flat = 0;
    for (size_t d = 0; d < in.size(); ++d) flat += (o[d] % in[d]) * strides[d];
    return flat;
  }))};
}

/// Range of constants (position ids; shapes are static, so its operands are known).
std::vector<Value> range(Importer& im, const NodeView& node) {
  const auto& startTensor = im.constantInput(node, 0, "start");
  auto one = [&](size_t i, const char* what) {
    auto v = numericValues(im.constantInput(node, i, what), node.label());
    if (v.size() != 1) node.error(fmt::format("{} must be one value", what));
    return v[0];
  };
  double start = one(0, "start"), limit = one(1, "limit"), delta = one(2, "delta");
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    node.error(fmt::format("range({}, {}, {}) has no length", start, limit, delta));
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > double(int64_t(1) << 32)) node.error(fmt::format("range({}, {}, {}) is too long", start, limit, delta));
  std::vector<int64_t> shape = {int64_t(count)};
  checkConstantSize(shape);
  std::vector<double> values;
  for (int64_t i = 0; i < int64_t(count); ++i) values.push_back(start + double(i) * delta);
  return {Importer::fromConstant(tensorFromValues(shape, startTensor.dtype(), values))};
}

/// CumSum of a constant along a constant axis (exclusive and reverse as ONNX defines them).
std::vector<Value> cumSum(Importer& im, const NodeView& node) {
  const auto& x = im.constantInput(node, 0, "x");
  auto axisValues = intValues(im.constantInput(node, 1, "axis"), node.label() + ": axis");
  if (axisValues.size() != 1) node.error("axis must be one value");
  const auto& shape = x.shape();
  size_t axis = size_t(axisOf(node, axisValues[0], shape.size()));
  bool exclusive = node.getInt("exclusive", 0) != 0, reverse = node.getInt("reverse", 0) != 0;
  auto values = numericValues(x, node.label());
  auto strides = stridesOf(shape);
  std::vector<double> out(values.size());
  int64_t extent = shape[axis], stride = strides[axis];
  for (size_t flat = 0; flat < values.size(); ++flat) {
    int64_t position = (int64_t(flat) / stride) % extent;
    if (position != 0) continue;  // each line along the axis starts at position 0
    double sum = 0;
    for (int64_t k = 0; k < extent; ++k) {
      int64_t p = reverse ? extent - 1 - k : k;
      size_t at = flat + size_t(p * stride);
      if (exclusive) {
        out[at] = sum;
        sum += values[at];
      } else {
        sum += values[at];
        out[at] = sum;
      }
    }
  }
  return {Importer::fromConstant(tensorFromValues(shape, x.dtype(), out))};
}

std::vector<Value> slice(Importer& im, const NodeView& node) {
  const Value& data = im.input(node, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.opset() < 10) {
    starts = node.getInts("starts");
    ends = node.getInts("ends");
    axes = node.getInts("axes");
  } else {
    starts = intValues(im.constantInput(node, 1, "starts"), node.label() + ": starts");
    ends = intValues(im.constantInput(node, 2, "ends"), node.label() + ": ends");
    if (node.hasInput(3)) axes = intValues(im.constantInput(node, 3, "axes"), node.label() + ": axes");
    if (node.hasInput(4)) steps = intValues(im.constantInput(node, 4, "steps"), node.label() + ": steps");
  }
  const std::vector<int64_t>& inShape = data.type.shape;
  size_t rank = inShape.size();
  if (axes.empty())
    for (size_t a = 0; a < starts.size(); ++a) axes.push_back(int64_t(a));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    node.error("starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(rank, 0), step(rank, 1), outShape = inShape;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axisOf(node, axes[k], rank, "axes");
    int64_t dim = inShape[size_t(a)], s = steps[k];
    if (s == 0) node.error("a step of 0");
    if (dim == 0) s = 1;  // an empty axis: every slice of it is empty (and the clamps below need dim > 0)
    // Clamped as ONNX says: negative values count from the end, then into the valid range.
    auto resolve = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -dim ? -dim - 1 : v + dim;  // avoids overflow of INT64_MIN + dim
      return std::clamp(v, lo, hi);
    };
    int64_t b = s > 0 ? resolve(starts[k], 0, dim) : resolve(starts[k], 0, dim - 1);
    int64_t e = s > 0 ? resolve(ends[k], 0, dim) : resolve(ends[k], -1, dim - 1);
    // Steps beyond the extent take one element; bounding them keeps -s and the sums in range.
    s = std::clamp(s, -dim - 1, dim + 1);
    int64_t count = s > 0 ? (e > b ? (e - b - 1) / s + 1 : 0) : (b > e ? (b - e - 1) / (-s) + 1 : 0);
    first[size_t(a)] = b;
    step[size_t(a)] = s;
    outShape[size_t(a)] = count;
  }
  if (!data.constant) {
    for (int64_t extent : outShape)
      if (extent == 0) node.error("the slice is empty: empty results are not supported");
    return {im.fromNode(
        im.addOp(node, "strided_slice", {im.inputNode(node, 0)}, {{"begin", first}, {"step", step}, {"shape", outShape}}))};
  }
  const auto& in = *data.constant;
  auto strides = stridesOf(in.shape());
  return {Importer::fromConstant(moved(in, outShape, [&](const std::vector<int64_t>& o) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d) flat += (first[d] + o[d] * step[d]) * strides[d];
    return flat;
  }))};
}

/// Split into consecutive parts along an axis: given sizes (an attribute before opset 13, an
/// input from it on), else equal parts, one per output (from opset 18 `num_outputs` parts, the
/// last one smaller when the extent does not divide). `num_outputs` is read at any opset:
/// PyTorch 2.11's exporter asked for opset 17 converts its opset-18 graph down and leaves the
/// attribute on GPT-2's Split (its meaning cannot be mistaken).
std::vector<Value> split(Importer& im, const NodeView& node) {
  const auto& in = im.inputType(node, 0).shape;
  int64_t axis = axisOf(node, node.getInt("axis", 0), in.size());
  std::vector<int64_t> sizes;
  if (node.opset() < 13) sizes = node.getInts("split");
  else if (node.hasInput(1)) sizes = intValues(im.constantInput(node, 1, "split"), node.label() + ": split");
  int64_t extent = in[size_t(axis)], parts = int64_t(node.outputCount());
  if (node.has("num_outputs")) {
    int64_t count = node.getInt("num_outputs", 0);
    if (!sizes.empty()) node.error("gives both the split input and the num_outputs attribute");
    if (count != parts) node.error(fmt::format("num_outputs is {}, the node has {} outputs", count, parts));
    int64_t chunk = (extent + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(chunk, extent - k * chunk));
  }
  if (sizes.empty()) {
    if (parts < 1 || extent % parts != 0) node.error(fmt::format("{} equal parts of extent {}", parts, extent));
    sizes.assign(size_t(parts), extent / parts);
  }
  if (int64_t(sizes.size()) != parts) node.error(fmt::format("{} sizes for {} outputs", sizes.size(), parts));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 1 || s > extent) node.error(fmt::format("part size {} for extent {}", s, extent));
    total += s;
  }
  if (total != extent) node.error(fmt::format("parts of {} elements for an extent of {}", total, extent));
  std::vector<Value> out;
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> begin(in.size(), 0), step(in.size(), 1), shape = in;
    begin[size_t(axis)] = offset;
    shape[size_t(axis)] = sizes[k];
    offset += sizes[k];
    out.push_back(im.fromNode(im.addOp(node, "strided_slice", {im.inputNode(node, 0)},
                                       {{"begin", begin}, {"step", step}, {"shape", shape}}, fmt::format("part{}", k))));
  }
  return out;
}

std::vector<Value> concat(Importer& im, const NodeView& node) {
  size_t n = node.inputCount();
  if (n == 0) node.error("no inputs");
  size_t rank = im.inputType(node, 0).shape.size();
  if (!node.has("axis")) node.error("attribute 'axis' is missing");
  int64_t axis = axisOf(node, node.getInt("axis", 0), rank);
  bool allConstant = true;
  for (size_t i = 0; i < n; ++i) {
    const auto& t = im.inputType(node, i);
    if (t.shape.size() != rank || t.dtype != im.inputType(node, 0).dtype)
      node.error(fmt::format("input {} is {}, input 0 is {}", i, t.str(), im.inputType(node, 0).str()));
    for (size_t d = 0; d < rank; ++d)
      if (int64_t(d) != axis && t.shape[d] != im.inputType(node, 0).shape[d])
        node.error(fmt::format("input {} is {}, input 0 is {}: extents differ off the axis", i, t.str(),
                               im.inputType(node, 0).str()));
    allConstant = allConstant && im.isConstant(node, i);
  }
  if (allConstant) {
    std::vector<runtime::Tensor> parts;
    for (size_t i = 0; i < n; ++i) parts.push_back(*im.input(node, i).constant);
    return {Importer::fromConstant(concatenated(parts, int(axis)))};
  }
  std::vector<int> inputs;
  for (size_t i = 0; i < n; ++i) inputs.push_back(im.inputNode(node, i));
  // ONNX puts no limit on a Concat's inputs, the graph's operator takes a bounded number: more
  // become a tree of concatenations along the same axis, each within the bound, in order.
  const size_t most = lookupOp("concatenate").maxInputs;
  for (int level = 0; inputs.size() > most; ++level) {
    std::vector<int> joined;
    for (size_t first = 0; first < inputs.size(); first += most) {
      std::vector<int> group(inputs.begin() + long(first), inputs.begin() + long(std::min(inputs.size(), first + most)));
      joined.push_back(group.size() == 1 ? group[0]
                                         : im.addOp(node, "concatenate", group, {{"axis", axis}},
                                                    fmt::format("part{}_{}", level, first / most)));
    }
    inputs = std::move(joined);
  }
  return {im.fromNode(im.addOp(node, "concatenate", inputs, {{"axis", axis}}))};
}

std::vector<Value> reshape(Importer& im, const NodeView& node) {
  const auto& in = im.inputType(node, 0).shape;
  auto requested = intValues(im.constantInput(node, 1, "shape"), node.label() + ": shape");
  bool allowZero = node.getInt("allowzero", 0) != 0;
  std::vector<int64_t> shape;
  int inferred = -1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == 0 && !allowZero) {
      if (i >= in.size()) node.error(fmt::format("shape entry {} is 0 (copy) but the input has only {} dimensions", i, in.size()));
      d = in[i];
    } else if (d == -1) {
      if (inferred >= 0) node.error("more than one -1 in the shape");
      inferred = int(i);
      d = 1;
    } else if (d <= 0) {
      node.error(fmt::format("invalid extent {} in the shape {}", d, fmt::join(requested, ",")));
    }
    shape.push_back(d);
  }
  int64_t known = elementsOf(shape), total = elementsOf(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      node.error(fmt::format("cannot infer the -1 of shape [{}] for {} elements", fmt::join(requested, ", "), total));
    shape[size_t(inferred)] = total / known;
  }
  return {reshapeValue(im, node, 0, shape)};
}

std::vector<Value> flatten(Importer& im, const NodeView& node) {
  const Value& v = im.input(node, 0);
  const auto& in = v.type.shape;
  int64_t axis = node.getInt("axis", 1);
  if (axis < 0) axis += int64_t(in.size());
  if (axis < 0 || axis > int64_t(in.size())) node.unsupported("axis", fmt::format("{} is out of range for rank {}", axis, in.size()));
  int64_t outer = elementsOf({in.begin(), in.begin() + axis});
  // Axis 1 is the graph's own flatten, which the layout conversion knows how to move.
  if (axis == 1 && in.size() >= 2 && !v.constant)
    return {im.fromNode(im.addOp(node, "flatten", {im.inputNode(node, 0)}))};
  return {reshapeValue(im, node, 0, {outer, elementsOf(in) / std::max<int64_t>(outer, 1)})};
}

std::vector<Value> squeeze(Importer& im, const NodeView& node) {
  const auto& in = im.inputType(node, 0).shape;
  auto axes = axesOf(im, node, 13);
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      int64_t k = axisOf(node, a, in.size(), "axes");
      if (in[size_t(k)] != 1) node.error(fmt::format("cannot squeeze axis {} of extent {}", k, in[size_t(k)]));
      drop[size_t(k)] = true;
    }
  } else {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < in.size(); ++d)
    if (!drop[d]) shape.push_back(in[d]);
  return {reshapeValue(im, node, 0, shape)};
}

std::vector<Value> unsqueeze(Importer& im, const NodeView& node) {
  const auto& in = im.inputType(node, 0).shape;
  auto axes = axesOf(im, node, 13);
  if (!axes) node.error("needs axes");
  size_t rank = in.size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    int64_t k = axisOf(node, a, rank, "axes");
    if (inserted[size_t(k)]) node.error(fmt::format("axis {} appears twice", k));
    inserted[size_t(k)] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : in[next++]);
  return {reshapeValue(im, node, 0, shape)};
}

std::vector<Value> transpose(Importer& im, const NodeView& node) {
  const Value& v = im.input(node, 0);
  size_t rank = v.type.shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t d = 0; d < rank; ++d) perm[d] = int64_t(rank - 1 - d);
  perm = node.getInts("perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < rank; ++d)
    if (sorted.size() != rank || sorted[d] != int64_t(d))
      node.unsupported("perm", fmt::format("[{}] is not a permutation of {} axes", fmt::join(perm, ", "), rank));
  if (v.constant) return {Importer::fromConstant(transposed(*v.constant, perm))};
  return {im.fromNode(im.addOp(node, "transpose", {im.inputNode(node, 0)}, {{"axes", perm}}))};
}

std::vector<Value> cast(Importer& im, const NodeView& node) {
  if (!node.has("to")) node.error("attribute 'to' is missing");
  int64_t to = node.getInt("to", 0);
  node.ignore("saturate");  // opset 19: how float8 targets saturate, which tessel does not compute with
  DataType dtype = dtypeOf(int32_t(std::clamp<int64_t>(to, 0, std::numeric_limits<int32_t>::max())), node.label() + ": attribute 'to'");
  const Value& v = im.input(node, 0);
  if (v.constant) return {Importer::fromConstant(converted(*v.constant, dtype))};
  if (v.type.dtype == dtype) return {v};
  return {im.fromNode(im.addOp(node, "cast", {im.inputNode(node, 0)}, {{"dtype", dtype.str()}}))};
}

/// Opset 18's Pad: `pads` holds the begins and ends of the listed axes only; as pads of every axis.
std::vector<int64_t> padsOnAxes(const NodeView& node, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes, size_t rank) {
  if (pads.size() != 2 * axes.size()) node.error(fmt::format("{} pads for {} axes", pads.size(), axes.size()));
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = size_t(axisOf(node, axes[k], rank, "axes"));
    if (seen[a]) node.error(fmt::format("axis {} is listed twice", axes[k]));
    seen[a] = true;
    full[a] = pads[k];
    full[rank + a] = pads[axes.size() + k];
  }
  return full;
}

std::vector<Value> pad(Importer& im, const NodeView& node) {
  std::string mode = node.getString("mode", "constant");
  if (mode != "constant") node.unsupported("mode", fmt::format("'{}' (only constant padding is)", mode));
  size_t rank = im.inputType(node, 0).shape.size();
  std::vector<int64_t> pads;
  double value = 0;
  if (node.opset() < 11) {
    pads = node.getInts("pads");
    value = node.getFloat("value", 0);
  } else {
    pads = intValues(im.constantInput(node, 1, "pads"), node.label() + ": pads");
    if (node.hasInput(2)) {
      auto v = numericValues(im.constantInput(node, 2, "constant_value"), node.label());
      if (v.size() != 1) node.error("constant_value must hold one value");
      value = v[0];
    }
    if (node.hasInput(3)) pads = padsOnAxes(node, pads, intValues(im.constantInput(node, 3, "axes"), node.label() + ": axes"), rank);
  }
  if (pads.size() != 2 * rank) node.error(fmt::format("{} pads for rank {}", pads.size(), rank));
  for (int64_t p : pads)
    if (p < 0 || p > (int64_t(1) << 20)) node.error(fmt::format("pad {} is not supported (negative pads crop)", p));
  std::vector<int64_t> before(pads.begin(), pads.begin() + long(rank)), after(pads.begin() + long(rank), pads.end());
  return {im.fromNode(im.addOp(node, "pad", {im.inputNode(node, 0)}, {{"before", before}, {"after", after}, {"value", value}}))};
}

}  // namespace

void addTensorConverters(ConverterTable& t) {
  t["Constant"] = constant;
  t["ConstantOfShape"] = constantOfShape;
  t["Identity"] = identity;
  t["Dropout"] = dropout;
  t["Shape"] = shape;
  t["Gather"] = gather;
  t["GatherElements"] = gatherElements;
  t["Expand"] = expand;
  t["Tile"] = tile;
  t["Range"] = range;
  t["CumSum"] = cumSum;
  t["Slice"] = slice;
  t["Concat"] = concat;
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Transpose"] = transpose;
  t["Cast"] = cast;
  t["Pad"] = pad;
  t["Split"] = split;
}

}  // namespace tessel::graph::onnx_import
