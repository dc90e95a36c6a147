#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "ops/Conv2d.h"
#include "ops/MatmulPacked.h"
#include "ops/Winograd.h"
#include "ops/WinogradNchw.h"

namespace tessel::graph {

bool winogradCandidate(const Graph& graph, int id, ops::Layout layout) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || n.op != "conv2d" || n.inputs.size() != 2) return false;
  if (!constantValue(graph, n.inputs[1])) return false;
  const Node& weight = graph.node(n.inputs[1]);
  ops::Conv2dAttrs attrs = readConv2dAttrs(n.op, n.attrs);
  return attrs.layout == layout && ops::winogradApplies(attrs, weight.type.shape, weight.type.dtype);
}

int winogradTileSize(const Graph& graph, int id) {
  if (id < 0 || graph.node(id).kind != NodeKind::Op || graph.node(id).op != "conv2d_winograd") return 0;
  return int(graph.node(id).attrs.value("tile_size", 4));
}

namespace {

/// Copies the graph, replacing each candidate convolution for which `choose` gives a nonzero
/// value with what `replace` adds (on the new graph, from the mapped inputs).
template <class Value>
Graph rewriteConvolutions(const Graph& graph, const std::function<bool(const Graph&, int)>& candidate,
                          const std::function<Value(const Graph&, int)>& choose,
                          const std::function<int(GraphRewriter&, const Node&, const std::vector<int>&, Value)>& replace) {
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    int id = int(i);
    const Node& n = graph.node(id);
    if (n.kind != NodeKind::Op) continue;
    Value chosen = candidate(graph, id) ? choose(graph, id) : Value(0);
    rw.setMapping(id, chosen == Value(0) ? rw.copyOp(id) : replace(rw, n, rw.mappedInputs(id), chosen));
  }
  return rw.finish();
}

}  // namespace

Graph useWinograd(const Graph& graph, const WinogradChoice& tileSizeOf, ops::Layout layout) {
  auto candidate = [layout](const Graph& g, int id) { return winogradCandidate(g, id, layout); };
  return rewriteConvolutions<int>(graph, candidate, tileSizeOf,
                                  [&](GraphRewriter& rw, const Node& n, const std::vector<int>& inputs, int m) {
                                    ops::winogradMatrices(m);  // an unsupported tile size is an error naming it
                                    const Node& weight = graph.node(n.inputs[1]);
                                    Attrs transform{{"tile_size", m}};
                                    if (layout == ops::Layout::NCHW) transform["kernel_layout"] = "OIHW";
                                    int transformed = rw.graph().addOp("winograd_weight_transform", {inputs[1]}, transform,
                                                                       rw.freshName(weight.name + "_winograd"));
                                    Attrs attrs = n.attrs;
                                    attrs["tile_size"] = m;
                                    return rw.graph().addOp("conv2d_winograd", {inputs[0], transformed}, attrs, n.name);
                                  });
}

WinogradChoice gpuWinogradChoice() {
  return [](const Graph& g, int id) {
    const auto& out = g.node(id).type.shape;  // NCHW
    return ops::gpuWinogradTileSize(out[2], out[3]);
  };
}

namespace {

/// The choice of a CPU rule over an NHWC candidate's channels and output size.
WinogradChoice nhwcWinogradChoice(size_t l2Bytes, int (*rule)(int64_t, int64_t, int64_t, int64_t, size_t)) {
  return [l2Bytes, rule](const Graph& g, int id) {
    const auto& weight = g.node(g.node(id).inputs[1]).type.shape;  // HWIO
    const auto& out = g.node(id).type.shape;                       // NHWC
    return rule(weight[2], weight[3], out[1], out[2], l2Bytes);
  };
}

}  // namespace

WinogradChoice defaultWinogradChoice(size_t l2Bytes) { return nhwcWinogradChoice(l2Bytes, ops::defaultWinogradTileSize); }

WinogradChoice largeWinogradChoice(size_t l2Bytes) { return nhwcWinogradChoice(l2Bytes, ops::largeWinogradTileSize); }

PackChoice defaultPackChoice(const target::CpuMachine& machine) {
  return [lanes = int64_t(machine.lanes(4)), registers = int64_t(machine.vectorRegisters)](const Graph& g, int id) {
    const Node& n = g.node(id);
    if (n.op != "conv2d") {  // a matrix product: [..., M, K] x [K, N], or dense's [N, K]
      const auto& a = g.node(n.inputs[0]).type.shape;
      const auto& w = g.node(n.inputs[1]).type.shape;
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < a.size(); ++d) rows *= a[d];
      int64_t k = a.back(), columns = n.op == "dense" ? w[0] : w[1];
      return ops::defaultMatmulPackBlock(k, columns, rows, lanes, registers);
    }
    ops::Conv2dAttrs attrs = readConv2dAttrs(n.op, n.attrs);
    int64_t stride = attrs.strides[0] == attrs.strides[1] ? attrs.strides[0] : 0;
    return ops::defaultPackBlock(g.node(n.inputs[1]).type.shape, n.type.shape, stride, lanes, registers);
  };
}

bool packingCandidate(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || n.op != "conv2d" || n.inputs.size() != 2) return false;
  if (!constantValue(graph, n.inputs[1])) return false;
  const Node& weight = graph.node(n.inputs[1]);
  ops::Conv2dAttrs attrs = readConv2dAttrs(n.op, n.attrs);
  return attrs.layout == ops::Layout::NHWC && attrs.groups == 1 && weight.type.shape.size() == 4 &&
         weight.type.dtype == DataType::float32() && (!attrs.outDtype || *attrs.outDtype == DataType::float32());
}

Graph usePackedWeights(const Graph& graph, const PackChoice& blockOf) {
  Graph convolutions = rewriteConvolutions<int64_t>(graph, packingCandidate, blockOf,
                                      [&](GraphRewriter& rw, const Node& n, const std::vector<int>& inputs, int64_t block) {
                                        const Node& weight = graph.node(n.inputs[1]);
                                        int packed = rw.graph().addOp("pack_conv_weight", {inputs[1]}, Attrs{{"block", block}},
                                                                      rw.freshName(weight.name + "_packed"));
                                        return rw.graph().addOp("conv2d_packed", {inputs[0], packed}, n.attrs, n.name);
                                      });
  return usePackedMatmulWeights(convolutions, blockOf);
}

}  // namespace tessel::graph
