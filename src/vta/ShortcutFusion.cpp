#include "vta/ShortcutFusion.h"

#include "graph/passes/GraphRewriter.h"

namespace tessel::vta {

namespace {

using graph::Graph;
using graph::Node;
using graph::NodeKind;

/// The chain that starts at `cast` (cast to int32 of an int8 value, then left shifts, each read
/// only by the next) when it ends in the only reader an int32 add of a non-constant packed
/// operand of its shape; empty otherwise.
std::vector<int> shortcutChain(const Graph& graph, int cast, const std::vector<std::vector<int>>& consumers) {
  const Node& c = graph.node(cast);
  if (c.kind != NodeKind::Op || c.op != "cast" || c.type.dtype != DataType::int32() || c.type.shape.size() != 6 ||
      graph.node(c.inputs[0]).type.dtype != DataType::int8())
    return {};
  std::vector<int> chain{cast};
  for (;;) {
    const std::vector<int>& readers = consumers[size_t(chain.back())];
    if (readers.size() != 1) return {};
    const Node& next = graph.node(readers[0]);
    if (next.op == "left_shift" && next.inputs[0] == chain.back()) {
      chain.push_back(readers[0]);
      continue;
    }
    if (next.op != "add" || next.type.dtype != DataType::int32() || next.type.shape != c.type.shape) return {};
    int other = next.inputs[0] == chain.back() ? next.inputs[1] : next.inputs[0];
    if (graph.node(other).kind == NodeKind::Constant || graph.node(other).type.shape != c.type.shape) return {};
    return chain;
  }
}

}  // namespace

Graph markShortcutsForFusion(const Graph& packed) {
  auto consumers = packed.consumers();
  std::vector<bool> marked(packed.nodes().size(), false);
  for (size_t id = 0; id < packed.nodes().size(); ++id)
    for (int n : shortcutChain(packed, int(id), consumers)) marked[size_t(n)] = true;
  return graph::withFlagOn(packed, marked, "fuse_into_reader");
}

}  // namespace tessel::vta
