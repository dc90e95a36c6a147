#include "graph/passes/ConstantEvaluation.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/Error.h"
#include "support/MemoryBudgets.h"

namespace tessel::graph {

namespace {

/// A folded value of at most this many elements is always kept (256 KiB of float32).
constexpr int64_t kAlwaysFoldedElements = int64_t(1) << 16;
/// A larger one only when it has at most this many times the elements of its inputs: a weight's
/// transform (a Winograd tile 4x, a packed layout's padded channel blocks) stays folded, a
/// broadcast of two vectors of a thousand into a matrix (500x) does not.
constexpr int64_t kFoldedGrowth = 64;

/// Whether an operator on constants is computed now, its value stored in the module's parameters,
/// or left to run with the network: a value much larger than its inputs is cheaper to compute
/// than to store (a 49 KB model must not become a 134 MB module), and never larger than the
/// budget of computed tensors, checked before anything is allocated.
bool worthFolding(const std::vector<runtime::Tensor>& inputs, const TensorType& result) {
  auto elements = budgets::productWithin(result.shape, budgets::kComputedTensorElements);
  if (!elements) return false;
  if (*elements <= kAlwaysFoldedElements) return true;
  int64_t inputElements = 0;
  for (const auto& t : inputs) inputElements += t.numel();
  return *elements <= kFoldedGrowth * inputElements;
}

}  // namespace

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
    if (inputs.size() != n.inputs.size() || !worthFolding(inputs, n.type)) {
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
