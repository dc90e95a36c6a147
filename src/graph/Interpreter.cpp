#include "graph/Interpreter.h"

#include "graph/NaiveKernels.h"

#include "support/Error.h"
#include "te/ComputeDAG.h"
#include "te/ReferenceEvaluator.h"

namespace tessel::graph {

namespace {

template <class T>
std::vector<double> valuesAs(const runtime::Tensor& t) {
  const T* p = t.dataAs<T>();
  return std::vector<double>(p, p + t.numel());
}

std::vector<double> toValues(const runtime::Tensor& tensor) {
  runtime::Tensor t = tensor.to(runtime::Device::cpu());
  DataType d = t.dtype();
  if (d == DataType::float32()) return valuesAs<float>(t);
  if (d == DataType::float64()) return valuesAs<double>(t);
  if (d == DataType::int32()) return valuesAs<int32_t>(t);
  if (d == DataType::int64()) return valuesAs<int64_t>(t);
  if (d == DataType::int8()) return valuesAs<int8_t>(t);
  if (d == DataType::uint8()) return valuesAs<uint8_t>(t);
  fail("the reference interpreter does not handle dtype {}", d.str());
}

template <class T>
void store(runtime::Tensor& t, const std::vector<double>& values) {
  T* p = t.dataAs<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = T(values[i]);
}

runtime::Tensor fromValues(const TensorType& type, const std::vector<double>& values) {
  auto t = runtime::Tensor::empty(type.shape, type.dtype);
  DataType d = type.dtype;
  if (d == DataType::float32()) store<float>(t, values);
  else if (d == DataType::float64()) store<double>(t, values);
  else if (d == DataType::int32()) store<int32_t>(t, values);
  else if (d == DataType::int64()) store<int64_t>(t, values);
  else if (d == DataType::int8()) store<int8_t>(t, values);
  else if (d == DataType::uint8()) store<uint8_t>(t, values);
  else fail("the reference interpreter does not handle dtype {}", d.str());
  return t;
}

}  // namespace

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
        values[id] = toValues(it->second);
        break;
      }
      case NodeKind::Constant: values[id] = toValues(graph.constant(int(id))); break;
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
  for (int o : graph.outputs()) outputs.push_back(fromValues(graph.node(o).type, values[size_t(o)]));
  return outputs;
}

}  // namespace tessel::graph
