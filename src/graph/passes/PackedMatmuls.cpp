// The matrix products' half of use_packed_weights: a product with a constant float32 weight
// becomes matmul_packed on a pack_matmul_weight of it (ops/MatmulPacked.h).
#include <numeric>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

bool floats(const TensorType& t) { return t.dtype == DataType::float32(); }

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  return std::accumulate(v.begin() + int64_t(from), v.begin() + int64_t(to), int64_t(1), std::multiplies<>());
}

}  // namespace

bool matmulPackingCandidate(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || n.inputs.size() != 2 || n.attrs.contains("out_dtype")) return false;
  if (n.op != "matmul" && n.op != "dense" && n.op != "batch_matmul") return false;
  const Node& a = graph.node(n.inputs[0]);
  const Node& weight = graph.node(n.inputs[1]);
  if (!constantValue(graph, n.inputs[1]) || weight.type.shape.size() != 2 || !floats(weight.type) || !floats(a.type)) return false;
  // One row is a matrix-vector product: the dense rule (lanes along the reduction) reads the
  // weight as one stream already.
  return product(a.type.shape, 0, a.type.shape.size() - 1) >= 2;
}

Graph usePackedMatmulWeights(const Graph& graph, const PackChoice& blockOf) {
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    int id = int(i);
    const Node& n = graph.node(id);
    if (n.kind != NodeKind::Op) continue;
    int64_t block = matmulPackingCandidate(graph, id) ? blockOf(graph, id) : 0;
    if (block == 0) {
      rw.copyOp(id);
      continue;
    }
    const Node& weight = graph.node(n.inputs[1]);
    int w = rw.mapped(n.inputs[1]);
    if (n.op == "dense")  // [N, K]: transposed to [K, N] first (folded with the packing)
      w = rw.graph().addOp("transpose", {w}, {{"axes", {1, 0}}}, rw.freshName(weight.name + "_kn"));
    int packed = rw.graph().addOp("pack_matmul_weight", {w}, Attrs{{"block", block}}, rw.freshName(weight.name + "_packed"));
    rw.setMapping(id, rw.graph().addOp("matmul_packed", {rw.mapped(n.inputs[0]), packed}, Attrs::object(), n.name));
  }
  return rw.finish();
}

}  // namespace tessel::graph
