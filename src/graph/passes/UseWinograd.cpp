#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "ops/Winograd.h"

namespace tessel::graph {

bool winogradCandidate(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || n.op != "conv2d" || n.inputs.size() != 2) return false;
  if (!constantValue(graph, n.inputs[1])) return false;
  const Node& weight = graph.node(n.inputs[1]);
  return ops::winogradApplies(readConv2dAttrs(n.op, n.attrs), weight.type.shape, weight.type.dtype);
}

Graph useWinograd(const Graph& graph, const WinogradChoice& tileSizeOf) {
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    int id = int(i);
    const Node& n = graph.node(id);
    if (n.kind != NodeKind::Op) continue;
    int m = winogradCandidate(graph, id) ? tileSizeOf(graph, id) : 0;
    if (m == 0) {
      rw.setMapping(id, rw.copyOp(id));
      continue;
    }
    ops::winogradMatrices(m);  // an unsupported tile size is an error naming it
    auto inputs = rw.mappedInputs(id);
    const Node& weight = graph.node(n.inputs[1]);
    Attrs tile = {{"tile_size", m}};
    int transformed = rw.graph().addOp("winograd_weight_transform", {inputs[1]}, tile, rw.freshName(weight.name + "_winograd"));
    Attrs attrs = n.attrs;
    attrs["tile_size"] = m;
    rw.setMapping(id, rw.graph().addOp("conv2d_winograd", {inputs[0], transformed}, attrs, n.name));
  }
  return rw.finish();
}

}  // namespace tessel::graph
