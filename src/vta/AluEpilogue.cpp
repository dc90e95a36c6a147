#include "vta/AluEpilogue.h"

#include <algorithm>
#include <limits>

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

/// One epilogue node reading the accumulator value `chain` as ALU steps.
void addSteps(const Graph& graph, int id, int chain, PackedConvolution& out) {
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
    const auto& shape = graph.node(other).type.shape;
    DataType dtype = graph.node(other).type.dtype;
    TESSEL_CHECK(dtype == DataType::int32() || dtype == DataType::int8(), "node '{}' (add): operand '{}' is {}, not int32 or int8",
                 n.name, graph.node(other).name, dtype.str());
    AluStep s;
    s.operand = other;
    s.perChannel = shape.size() == 5;  // [C/c, 1, 1, 1, c], as graph packing makes biases
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

}  // namespace

PackedConvolution describePackedConvolution(const Graph& graph, const graph::FusedGroup& group) {
  TESSEL_CHECK(!group.nodes.empty() && graph.node(group.nodes[0]).op == "conv2d_blocked",
               "a packed convolution group starts with conv2d_blocked");
  PackedConvolution out;
  out.convolution = group.nodes[0];
  const Node& conv = graph.node(out.convolution);
  out.data = conv.inputs[0];
  out.weight = conv.inputs[1];
  TESSEL_CHECK(graph.node(out.data).type.dtype == DataType::int8() && graph.node(out.weight).type.dtype == DataType::int8() &&
                   conv.type.dtype == DataType::int32(),
               "node '{}' (conv2d_blocked): VTA multiplies int8 by int8 into int32, this is {} x {} -> {}", conv.name,
               graph.node(out.data).type.dtype.str(), graph.node(out.weight).type.dtype.str(), conv.type.dtype.str());
  int chain = out.convolution;
  for (size_t k = 1; k < group.nodes.size(); ++k) {
    int id = group.nodes[k];
    const Node& n = graph.node(id);
    TESSEL_CHECK(std::find(n.inputs.begin(), n.inputs.end(), chain) != n.inputs.end(),
                 "node '{}' ({}): does not read the node before it, '{}' (an epilogue is a chain)", n.name, n.op,
                 graph.node(chain).name);
    if (n.op == "cast" && n.type.dtype == DataType::int8()) {
      if (k + 1 == group.nodes.size()) out.storedBytes = 1;  // the STORE's truncation
      else TESSEL_CHECK(clippedToInt8(out.epilogue), "node '{}' (cast to int8): inside the epilogue, without a clip to the int8 range before it", n.name);
    } else {
      addSteps(graph, id, chain, out);
    }
    chain = id;
  }
  return out;
}

}  // namespace tessel::vta
