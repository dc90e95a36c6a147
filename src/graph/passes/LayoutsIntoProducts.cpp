// fuse_layouts_into_products: a transformer layer moves its activations between layouts four
// times around attention (the heads split out of the query, key and value projections, merged
// back after the context product) and once more where split_reductions cuts a product's rows into
// slices. Each is a copy kernel of its own on a GPU, 2-3 us of a BERT-base layer's 80 on an H200,
// while the product that reads the moved value copies its operand into shared memory anyway:
// the layout op computed in that copy costs an index expression and no pass over memory.
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

/// The layout ops a chain may hold: each reads one value and only moves its elements.
bool movesElementsOnly(const Node& n) {
  return n.kind == NodeKind::Op && n.inputs.size() == 1 &&
         (n.op == "reshape" || n.op == "transpose" || n.op == "strided_slice" || n.op == "flatten");
}

bool isMatrixProduct(const Node& n) {
  return n.kind == NodeKind::Op && (n.op == "batch_matmul" || n.op == "matmul" || n.op == "dense");
}

}  // namespace

Graph fuseLayoutsIntoProducts(const Graph& graph) {
  const auto& nodes = graph.nodes();
  auto consumers = graph.consumers();
  std::vector<bool> isOutput = graph.outputFlags();
  std::vector<bool> marked(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!isMatrixProduct(nodes[i])) continue;
    for (int operand : nodes[i].inputs) {
      // Back from the operand while each layout op is read by the next alone (the product last).
      for (int id = operand; movesElementsOnly(nodes[size_t(id)]) && !isOutput[size_t(id)] && consumers[size_t(id)].size() == 1;
           id = nodes[size_t(id)].inputs[0])
        marked[size_t(id)] = true;
    }
  }
  return withFlagOn(graph, marked, "fuse_into_reader");
}

}  // namespace tessel::graph
