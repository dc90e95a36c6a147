#include "graph/passes/ConstantEvaluation.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/Error.h"

namespace tessel::graph {

Graph foldConstants(const Graph& graph) {
  GraphRewriter rw(graph);
  // The folded value of every old node that is (or became) a constant.
  std::vector<const runtime::Tensor*> value(graph.nodes().size(), nullptr);
  std::vector<runtime::Tensor> folded(graph.nodes().size());
  // Folded values enter the new graph only when something that stays reads them, so the
  // intermediate constants of a folded chain never reach the module's parameters.
  auto materialize = [&](int id) {
    if (folded[size_t(id)].defined() && !rw.isMapped(id))
      rw.setMapping(id, rw.graph().addConstant(graph.node(id).name, folded[size_t(id)]));
  };
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    if (n.kind == NodeKind::Constant) value[i] = &graph.constant(int(i));
    if (n.kind != NodeKind::Op) continue;
    std::vector<runtime::Tensor> inputs;
    for (int in : n.inputs)
      if (value[size_t(in)]) inputs.push_back(*value[size_t(in)]);
    if (inputs.size() != n.inputs.size()) {
      for (int in : n.inputs) materialize(in);
      rw.copyOp(int(i));
      continue;
    }
    try {
      folded[i] = evaluateOnConstants(n.op, n.attrs, inputs, n.type);
    } catch (const Error& e) {
      throw e.withContext("folding the constant node '" + n.name + "' (" + n.op + ")");
    }
    value[i] = &folded[i];
  }
  for (int o : graph.outputs()) materialize(o);
  return rw.finish();
}

}  // namespace tessel::graph
