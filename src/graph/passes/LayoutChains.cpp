// collapse_layout_chains: a run of transposes and reshapes that puts every element back where it
// was (a layout conversion undone by the next one; a patch embedding's NHWC grid turned NCHW
// and flattened back to tokens by the exporter's flatten(2).transpose(1, 2)) is a reshape at
// most, and a copy kernel fewer on a GPU, where each costs 2-3 us of a transformer layer's 80.
#include <numeric>

#include "graph/passes/ConstantEvaluation.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/MemoryBudgets.h"

namespace tessel::graph {

namespace {

bool isLayoutOp(const Node& n) { return n.kind == NodeKind::Op && (n.op == "reshape" || n.op == "transpose") && n.inputs.size() == 1; }

/// Whether the chain (the first node's input, then each node reading the one before) leaves
/// every element in its row-major place: evaluated on the element indices themselves.
bool keepsElementOrder(const Graph& graph, const std::vector<int>& chain) {
  const TensorType& source = graph.node(graph.node(chain.front()).inputs[0]).type;
  // 4M elements: 16 MiB of indices held while a pass runs; a larger chain stays as it is.
  constexpr int64_t kLargestEvaluated = int64_t(1) << 22;
  auto count = budgets::productWithin(source.shape, kLargestEvaluated);
  if (!count) return false;
  runtime::Tensor order = runtime::Tensor::empty(source.shape, DataType::int32());
  std::iota(order.dataAs<int32_t>(), order.dataAs<int32_t>() + *count, 0);
  for (int id : chain) {
    const Node& n = graph.node(id);
    order = evaluateOnConstants(n.op, n.attrs, {order}, n.type);
  }
  for (int64_t e = 0; e < *count; ++e)
    if (order.dataAs<int32_t>()[e] != e) return false;
  return true;
}

}  // namespace

Graph collapseLayoutChains(const Graph& graph) {
  const auto& nodes = graph.nodes();
  auto consumers = graph.consumers();
  std::vector<bool> isOutput = graph.outputFlags();
  // A link: a layout op read by one layout op alone, so that the chain past it can replace it.
  auto isLink = [&](int id) {
    return isLayoutOp(nodes[size_t(id)]) && !isOutput[size_t(id)] && consumers[size_t(id)].size() == 1 &&
           isLayoutOp(nodes[size_t(consumers[size_t(id)][0])]);
  };

  GraphRewriter rw(graph);
  for (size_t i = 0; i < nodes.size(); ++i) {
    int id = int(i);
    const Node& n = nodes[i];
    if (n.kind != NodeKind::Op) continue;
    // The end of a chain of two or more: its links back to the first.
    std::vector<int> chain{id};
    if (isLayoutOp(n) && !isLink(id))
      while (isLink(nodes[size_t(chain.front())].inputs[0])) chain.insert(chain.begin(), nodes[size_t(chain.front())].inputs[0]);
    if (chain.size() < 2 || !keepsElementOrder(graph, chain)) {
      rw.setMapping(id, rw.copyOp(id));
      continue;
    }
    int source = rw.mapped(nodes[size_t(chain.front())].inputs[0]);
    // The links were copied on the way; they are dead now, dropped below. A graph output keeps
    // a node of its own (a reshape), so that it never becomes an input or another output.
    if (rw.graph().node(source).type.shape == n.type.shape && !isOutput[i])
      rw.setMapping(id, source);
    else
      rw.setMapping(id, rw.graph().addOp("reshape", {source}, {{"shape", n.type.shape}}, n.name));
  }
  // Dead links would count as readers in the passes after this one (an add as a product's
  // only reader makes it the product's epilogue).
  return eliminateDeadCode(rw.finish());
}

}  // namespace tessel::graph
