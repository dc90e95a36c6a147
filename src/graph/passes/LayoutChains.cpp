// collapse_layout_chains: a run of transposes and reshapes that puts every element back where it
// was (a layout conversion undone by the next one; a patch embedding's NHWC grid turned NCHW
// and flattened back to tokens by the exporter's flatten(2).transpose(1, 2)) is a reshape at
// most, and a copy kernel fewer on a GPU, where each costs 2-3 us of a transformer layer's 80.
#include <numeric>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/MemoryBudgets.h"

namespace tessel::graph {

namespace {

bool isLayoutOp(const Node& n) { return n.kind == NodeKind::Op && (n.op == "reshape" || n.op == "transpose") && n.inputs.size() == 1; }

/// The positions, in the input's row-major order, of a transpose's output elements.
std::vector<int64_t> transposed(const std::vector<int64_t>& values, const std::vector<int64_t>& shape, std::vector<int> axes) {
  const size_t rank = shape.size();
  if (axes.empty())
    for (size_t d = rank; d-- > 0;) axes.push_back(int(d));
  std::vector<int64_t> strides(rank, 1), outShape(rank), index(rank, 0);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  for (size_t d = 0; d < rank; ++d) {
    if (axes[d] < 0) axes[d] += int(rank);
    outShape[d] = shape[size_t(axes[d])];
  }
  std::vector<int64_t> out;
  out.reserve(values.size());
  for (size_t e = 0; e < values.size(); ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * strides[size_t(axes[d])];
    out.push_back(values[size_t(offset)]);
    for (size_t d = rank; d-- > 0;) {  // the output's next index, row-major
      if (++index[d] < outShape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

/// Whether the chain (the first node's input, then each node reading the one before) leaves
/// every element in its row-major place: evaluated on the element indices themselves.
bool keepsElementOrder(const Graph& graph, const std::vector<int>& chain) {
  const TensorType& source = graph.node(graph.node(chain.front()).inputs[0]).type;
  // 4M elements: 32 MiB of indices held while a pass runs; a larger chain stays as it is.
  constexpr int64_t kLargestEvaluated = int64_t(1) << 22;
  auto count = budgets::productWithin(source.shape, kLargestEvaluated);
  if (!count) return false;
  std::vector<int64_t> order(static_cast<size_t>(*count));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::vector<int64_t> shape = source.shape;
  for (int id : chain) {
    const Node& n = graph.node(id);
    if (n.op == "transpose") order = transposed(order, shape, n.attrs.value("axes", std::vector<int>{}));
    shape = n.type.shape;
  }
  for (size_t e = 0; e < order.size(); ++e)
    if (order[e] != int64_t(e)) return false;
  return true;
}

}  // namespace

Graph collapseLayoutChains(const Graph& graph) {
  const auto& nodes = graph.nodes();
  auto consumers = graph.consumers();
  std::vector<bool> isOutput(nodes.size(), false);
  for (int o : graph.outputs()) isOutput[size_t(o)] = true;
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
