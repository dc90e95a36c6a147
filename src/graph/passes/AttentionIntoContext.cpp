// fuse_attention: attention's scores (Q Kᵀ), their scaling and mask, and the softmax over the
// keys run as three kernels on a GPU when each is a function of its own, the probabilities going
// to device memory and back twice per head: a fifth of a BERT-base layer on an H200 (scores 5 us,
// softmax 5, context 6 of 80). PyTorch's scaled-dot-product attention runs them as one kernel.
// Marked `fuse_into_reader`, they join the context product's function, whose schedule keeps a
// block's rows of scores in shared memory (ops/GpuAttentionTiles.h).
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

bool isBatchedProduct(const Node& n) { return n.kind == NodeKind::Op && n.op == "batch_matmul"; }

/// Element-wise ops that may sit between the scores and the softmax (scale, mask).
bool scalesOrMasks(const Node& n) {
  return n.kind == NodeKind::Op && (n.op == "divide" || n.op == "multiply" || n.op == "add" || n.op == "subtract" || n.op == "where");
}

bool isLastAxisSoftmax(const Node& n) {
  if (n.kind != NodeKind::Op || n.op != "softmax") return false;
  int64_t axis = n.attrs.value("axis", int64_t(-1));
  int64_t rank = int64_t(n.type.shape.size());
  return axis == -1 || axis == rank - 1;
}

}  // namespace

Graph fuseAttention(const Graph& graph) {
  const auto& nodes = graph.nodes();
  auto consumers = graph.consumers();
  std::vector<bool> isOutput = graph.outputFlags();
  std::vector<bool> marked(nodes.size(), false);
  auto onlyFeedsTheNext = [&](int id) { return !isOutput[size_t(id)] && consumers[size_t(id)].size() == 1; };
  for (const Node& context : nodes) {
    if (!isBatchedProduct(context) || context.inputs.empty()) continue;
    int softmax = context.inputs[0];
    if (!isLastAxisSoftmax(nodes[size_t(softmax)]) || !onlyFeedsTheNext(softmax)) continue;
    // Back from the softmax through the scale and mask to the scores: each read by the next
    // alone, each of the scores' shape, the chain running through its first value input.
    std::vector<int> chain = {softmax};
    int id = nodes[size_t(softmax)].inputs[0];
    const auto& shape = nodes[size_t(softmax)].type.shape;
    while (scalesOrMasks(nodes[size_t(id)]) && onlyFeedsTheNext(id) && nodes[size_t(id)].type.shape == shape) {
      chain.push_back(id);
      const Node& n = nodes[size_t(id)];
      // where(condition, x, y): the value runs through x; the others through their first input.
      id = n.op == "where" ? n.inputs[1] : n.inputs[0];
    }
    if (!isBatchedProduct(nodes[size_t(id)]) || !onlyFeedsTheNext(id) || nodes[size_t(id)].type.shape != shape) continue;
    chain.push_back(id);
    for (int c : chain) marked[size_t(c)] = true;
  }
  return withFlagOn(graph, marked, "fuse_into_reader");
}

}  // namespace tessel::graph
