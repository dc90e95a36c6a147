#include "vta/AluEpilogue.h"

#include <algorithm>
#include <limits>
#include <set>

#include "support/Error.h"

namespace tessel::vta {

namespace {

using graph::Graph;
using graph::Node;

/// The value of a one-element integer constant, or nothing.
std::optional<int64_t> scalarConstant(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind != graph::NodeKind::Constant) return std::nullopt;
  const runtime::Tensor& t = graph.constant(id);
  if (t.numel() != 1) return std::nullopt;
  if (t.dtype() == DataType::int32()) return t.dataAs<int32_t>()[0];
  if (t.dtype() == DataType::int8()) return t.dataAs<int8_t>()[0];
  return std::nullopt;
}

/// The ALU's immediate is a signed 16-bit field.
int32_t immediate(int64_t value, const Node& n) {
  TESSEL_CHECK(value >= std::numeric_limits<int16_t>::min() && value <= std::numeric_limits<int16_t>::max(),
               "node '{}' ({}): {} does not fit the ALU's 16-bit immediate", n.name, n.op, value);
  return int32_t(value);
}

/// A shortcut chain fused into the group (cast of an int8 value to int32, left shifts), ending
/// at `last`: the int8 value and the bits it is shifted by.
struct Shortcut {
  int value = -1;
  int shiftLeft = 0;
};
Shortcut shortcutEndingAt(const Graph& graph, int last, const std::set<int>& shortcutNodes) {
  Shortcut s;
  int at = last;
  while (graph.node(at).op == "left_shift") {
    s.shiftLeft += int(graph.node(at).attrs.value("bits", int64_t(0)));
    at = graph.node(at).inputs[0];
    TESSEL_CHECK(shortcutNodes.count(at), "node '{}': a fused shortcut is a cast to int32 then left shifts", graph.node(last).name);
  }
  const Node& cast = graph.node(at);
  TESSEL_CHECK(cast.op == "cast" && cast.type.dtype == DataType::int32() && graph.node(cast.inputs[0]).type.dtype == DataType::int8(),
               "node '{}' ({}): a fused shortcut starts with a cast of an int8 value to int32", cast.name, cast.op);
  s.value = cast.inputs[0];
  return s;
}

/// One epilogue node reading the accumulator value `chain` as ALU steps; `shortcutNodes` are the
/// group's fused shortcut chains.
void addSteps(const Graph& graph, int id, int chain, PackedConvolution& out, const std::set<int>& shortcutNodes,
              std::set<int>& usedShortcuts) {
  const Node& n = graph.node(id);
  auto step = [&](AluOpcode opcode, int64_t value) { out.epilogue.push_back({opcode, immediate(value, n)}); };
  if (n.op == "relu") return step(AluOpcode::Max, 0);
  if (n.op == "clip") {
    step(AluOpcode::Min, int64_t(n.attrs.value("max", 6.0)));
    return step(AluOpcode::Max, int64_t(n.attrs.value("min", 0.0)));
  }
  if (n.op == "right_shift") return step(AluOpcode::ShiftRight, n.attrs.value("bits", 0));
  if (n.op == "left_shift") return step(AluOpcode::ShiftRight, -n.attrs.value("bits", 0));
  if (n.op == "add") {
    int other = n.inputs[0] == chain ? n.inputs[1] : n.inputs[0];
    if (auto value = scalarConstant(graph, other)) return step(AluOpcode::Add, *value);
    if (shortcutNodes.count(other)) {
      Shortcut shortcut = shortcutEndingAt(graph, other, shortcutNodes);
      TESSEL_CHECK(usedShortcuts.insert(other).second, "node '{}': the fused shortcut '{}' is added twice", n.name,
                   graph.node(other).name);
      TESSEL_CHECK(graph.node(shortcut.value).type.shape == graph.node(chain).type.shape,
                   "node '{}' (add): shortcut '{}' {} is not {}", n.name, graph.node(shortcut.value).name,
                   graph.node(shortcut.value).type.str(), graph.node(chain).type.str());
      AluStep s;
      s.operand = shortcut.value;
      s.operandInt8 = true;
      s.operandShiftLeft = shortcut.shiftLeft;
      immediate(-int64_t(shortcut.shiftLeft), n);  // the shift is an ALU immediate
      out.epilogue.push_back(s);
      return;
    }
    const auto& shape = graph.node(other).type.shape;
    DataType dtype = graph.node(other).type.dtype;
    TESSEL_CHECK(dtype == DataType::int32() || dtype == DataType::int8(), "node '{}' (add): operand '{}' is {}, not int32 or int8",
                 n.name, graph.node(other).name, dtype.str());
    AluStep s;
    s.operand = other;
    // [C/c, 1, 1, 1, c] beside a convolution, as graph packing makes biases; [M/c, 1, c]
    // beside a dense: one dimension fewer than the result, broadcast over all but the channels.
    s.perChannel = shape.size() + 1 == graph.node(chain).type.shape.size();
    s.operandInt8 = dtype == DataType::int8();
    TESSEL_CHECK(s.perChannel || shape == graph.node(chain).type.shape, "node '{}' (add): operand '{}' {} is neither per channel nor {}",
                 n.name, graph.node(other).name, graph.node(other).type.str(), graph.node(chain).type.str());
    out.epilogue.push_back(s);
    return;
  }
  if (n.op == "cast" && n.type.dtype == DataType::int32()) return;  // the accumulator is int32
  fail("node '{}' ({} to {}): the VTA ALU has no such operation", n.name, n.op, n.type.str());
}

/// Whether the steps so far end in a clip into [-128, 127], which makes a cast to int8 the
/// identity on the accumulator.
bool clippedToInt8(const std::vector<AluStep>& steps) {
  size_t n = steps.size();
  if (n < 2) return false;
  const AluStep &high = steps[n - 2], &low = steps[n - 1];
  return high.opcode == AluOpcode::Min && high.immediate && *high.immediate <= 127 && low.opcode == AluOpcode::Max &&
         low.immediate && *low.immediate >= -128;
}

/// Integer bounds of a value, inclusive.
struct Range {
  int64_t lo, hi;
};
constexpr Range kInt32Range{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};

/// An int32 result's range: a value past int32 may have wrapped around to anything.
Range wrapped(Range r) { return r.lo < kInt32Range.lo || r.hi > kInt32Range.hi ? kInt32Range : r; }

/// A range times 2^bits (a left shift), wrapped.
Range shiftedLeft(Range r, int64_t bits) {
  if (bits >= 32) return kInt32Range;
  return wrapped({r.lo * (int64_t(1) << bits), r.hi * (int64_t(1) << bits)});
}

/// What a node outside the group can hold: a constant's values, an int8 value's byte, an
/// int32 cast or shift of one followed back, else its dtype's whole range.
Range valueRange(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind == graph::NodeKind::Constant) {
    const runtime::Tensor& t = graph.constant(id);
    Range r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    for (int64_t i = 0; i < t.numel(); ++i) {
      int64_t v = t.dtype() == DataType::int8() ? t.dataAs<int8_t>()[i] : t.dataAs<int32_t>()[i];
      r = {std::min(r.lo, v), std::max(r.hi, v)};
    }
    return t.numel() > 0 ? r : kInt32Range;
  }
  if (n.type.dtype == DataType::int8()) return {-128, 127};
  if (n.kind == graph::NodeKind::Op && n.type.dtype == DataType::int32() && !n.inputs.empty()) {
    if (n.op == "cast") return valueRange(graph, n.inputs[0]);
    if (n.op == "left_shift") return shiftedLeft(valueRange(graph, n.inputs[0]), n.attrs.value("bits", int64_t(0)));
  }
  return kInt32Range;
}

/// Drops the MIN and MAX steps that cannot change the value: interval arithmetic from the
/// convolution's bound (int8 products summed over the reduction) through the steps. After a
/// relu, a rounding add and a shift, the clip's MAX -127 is such a step: one ALU pass over
/// the tile less in every relu group. Exact: an interval that may have wrapped around int32
/// becomes the whole range, so nothing is dropped on a value that can overflow.
void dropRedundantClamps(const Graph& graph, PackedConvolution& out) {
  // The weight is [K/c, C/c, KH, KW, c, c] or [M/c, C/c, c, c]: the reduction runs over every
  // dimension but the first and the output block.
  const auto& w = graph.node(out.weight).type.shape;
  int64_t reduction = 1;
  for (size_t i = 1; i < w.size(); ++i)
    if (i + 2 != w.size()) reduction *= w[i];
  Range r = wrapped({-128 * 127 * reduction, 128 * 128 * reduction});
  std::vector<AluStep> kept;
  for (const AluStep& s : out.epilogue) {
    if (s.opcode == AluOpcode::Max && s.immediate && r.lo >= *s.immediate) continue;
    if (s.opcode == AluOpcode::Min && s.immediate && r.hi <= *s.immediate) continue;
    kept.push_back(s);
    Range operand = s.immediate ? Range{*s.immediate, *s.immediate} : valueRange(graph, s.operand);
    if (s.operandShiftLeft > 0) operand = shiftedLeft(operand, s.operandShiftLeft);
    switch (s.opcode) {
      case AluOpcode::Add: r = wrapped({r.lo + operand.lo, r.hi + operand.hi}); break;
      case AluOpcode::Max: r = {std::max(r.lo, operand.lo), std::max(r.hi, operand.hi)}; break;
      case AluOpcode::Min: r = {std::min(r.lo, operand.lo), std::min(r.hi, operand.hi)}; break;
      case AluOpcode::ShiftRight:
        if (!s.immediate) r = kInt32Range;
        else if (*s.immediate >= 0) r = {r.lo >> std::min<int64_t>(*s.immediate, 63), r.hi >> std::min<int64_t>(*s.immediate, 63)};
        else r = shiftedLeft(r, -int64_t(*s.immediate));
        break;
      default: r = kInt32Range;
    }
  }
  out.epilogue = std::move(kept);
}

}  // namespace

int packedConvolutionOf(const Graph& graph, const graph::FusedGroup& group, const std::string& op) {
  for (int id : group.nodes)
    if (graph.node(id).op == op) return id;
  return -1;
}

PackedConvolution describePackedConvolution(const Graph& graph, const graph::FusedGroup& group, const std::string& op) {
  PackedConvolution out;
  out.convolution = packedConvolutionOf(graph, group, op);
  TESSEL_CHECK(out.convolution >= 0, "a packed group has a {} node", op);
  const Node& conv = graph.node(out.convolution);
  out.data = conv.inputs[0];
  out.weight = conv.inputs[1];
  TESSEL_CHECK(graph.node(out.data).type.dtype == DataType::int8() && graph.node(out.weight).type.dtype == DataType::int8() &&
                   conv.type.dtype == DataType::int32(),
               "node '{}' ({}): VTA multiplies int8 by int8 into int32, this is {} x {} -> {}", conv.name, op,
               graph.node(out.data).type.dtype.str(), graph.node(out.weight).type.dtype.str(), conv.type.dtype.str());
  std::set<int> shortcutNodes, usedShortcuts;
  for (int id : group.nodes)
    if (id != out.convolution && graph.node(id).attrs.value("fuse_into_reader", false)) shortcutNodes.insert(id);
  int chain = out.convolution;
  std::vector<int> epilogue;  // the chain from the convolution, in order
  for (int id : group.nodes)
    if (id > out.convolution && !shortcutNodes.count(id)) epilogue.push_back(id);
  TESSEL_CHECK(epilogue.size() + shortcutNodes.size() + 1 == group.nodes.size(),
               "node '{}' ({}): the group has operators before it that are no fused shortcut", conv.name, op);
  for (size_t k = 0; k < epilogue.size(); ++k) {
    int id = epilogue[k];
    const Node& n = graph.node(id);
    TESSEL_CHECK(std::find(n.inputs.begin(), n.inputs.end(), chain) != n.inputs.end(),
                 "node '{}' ({}): does not read the node before it, '{}' (an epilogue is a chain)", n.name, n.op,
                 graph.node(chain).name);
    if (n.op == "cast" && n.type.dtype == DataType::int8()) {
      if (k + 1 == epilogue.size()) out.storedBytes = 1;  // the STORE's truncation
      else TESSEL_CHECK(clippedToInt8(out.epilogue), "node '{}' (cast to int8): inside the epilogue, without a clip to the int8 range before it", n.name);
    } else {
      addSteps(graph, id, chain, out, shortcutNodes, usedShortcuts);
    }
    chain = id;
  }
  // Every fused shortcut chain ends in an add of the epilogue.
  std::set<int> chainEnds = shortcutNodes;
  for (int id : shortcutNodes)
    for (int in : graph.node(id).inputs) chainEnds.erase(in);
  for (int end : chainEnds)
    TESSEL_CHECK(usedShortcuts.count(end), "node '{}' ({}): a fused shortcut that no add of the epilogue reads", graph.node(end).name,
                 graph.node(end).op);
  dropRedundantClamps(graph, out);
  return out;
}

}  // namespace tessel::vta
