#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

Graph eliminateDeadCode(const Graph& graph) {
  std::vector<bool> live(graph.nodes().size(), false);
  for (int o : graph.outputs()) live[size_t(o)] = true;
  // Inputs precede their consumers, so one backward walk sees every consumer first.
  for (size_t i = graph.nodes().size(); i-- > 0;)
    if (live[i])
      for (int in : graph.nodes()[i].inputs) live[size_t(in)] = true;
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i)
    if (live[i] && graph.nodes()[i].kind == NodeKind::Op) rw.copyOp(int(i));
  return rw.finish();
}

}  // namespace tessel::graph
