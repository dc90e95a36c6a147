#include "graph/Interpreter.h"

#include "graph/NaiveKernels.h"
#include "graph/TensorValues.h"

#include "support/Error.h"
#include "te/ComputeDAG.h"
#include "te/ReferenceEvaluator.h"

namespace tessel::graph {


std::vector<runtime::Tensor> interpretGraph(const Graph& graph, const std::map<std::string, runtime::Tensor>& inputs) {
  std::vector<std::vector<double>> values(graph.nodes().size());
  for (size_t id = 0; id < graph.nodes().size(); ++id) {
    const Node& n = graph.nodes()[id];
    switch (n.kind) {
      case NodeKind::Input: {
        auto it = inputs.find(n.name);
        TESSEL_CHECK(it != inputs.end(), "the reference interpreter needs input '{}'", n.name);
        TESSEL_CHECK(it->second.dtype() == n.type.dtype && it->second.shape() == n.type.shape,
                     "input '{}': expected {}, got {} {}", n.name, n.type.str(), it->second.dtype().str(),
                     runtime::formatShape(it->second.shape()));
        values[id] = tensorValues(it->second);
        break;
      }
      case NodeKind::Constant: values[id] = tensorValues(graph.constant(int(id))); break;
      case NodeKind::Op: {
        std::vector<const std::vector<double>*> inputValues;
        std::vector<TensorType> inputTypes;
        for (int in : n.inputs) {
          inputValues.push_back(&values[size_t(in)]);
          inputTypes.push_back(graph.node(in).type);
        }
        if (auto naive = evaluateNaively(n, inputValues, inputTypes)) {
          // Rounded to the node's type as the expression's evaluation would store it.
          for (double& v : *naive) v = te::roundToType(v, n.type.dtype);
          values[id] = std::move(*naive);
          break;
        }
        std::vector<te::Tensor> placeholders;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          const TensorType& t = graph.node(n.inputs[i]).type;
          placeholders.push_back(te::placeholder(t.shape, t.dtype, "input" + std::to_string(i)));
        }
        te::ComputeDAG dag({lookupOp(n.op).compute(placeholders, n.attrs)}, placeholders);
        te::TensorValues in;
        for (size_t i = 0; i < n.inputs.size(); ++i) in[dag.inputNames()[i]] = values[size_t(n.inputs[i])];
        try {
          values[id] = te::evaluateReference(dag, in).at(dag.outputNames()[0]);
        } catch (const Error& e) {
          throw e.withContext("interpreting node '" + n.name + "' (" + n.op + ")");
        }
        break;
      }
    }
  }
  std::vector<runtime::Tensor> outputs;
  for (int o : graph.outputs()) outputs.push_back(valuesToTensor(graph.node(o).type.shape, graph.node(o).type.dtype, values[size_t(o)]));
  return outputs;
}

}  // namespace tessel::graph
