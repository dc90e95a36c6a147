#include "vta/NetworkRunner.h"

#include <optional>

#include "graph/Interpreter.h"
#include "support/Error.h"
#include "vta/DenseLowering.h"

namespace tessel::vta {

namespace {

using graph::Graph;
using graph::Node;
using graph::NodeKind;

/// One operator node in the interpreter: a graph of just it, on its inputs' values.
runtime::Tensor interpretNode(const Graph& graph, int id, const std::function<runtime::Tensor(int)>& valueOf) {
  const Node& n = graph.node(id);
  Graph single;
  std::map<std::string, runtime::Tensor> feeds;
  std::vector<int> inputs;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    int in = n.inputs[k];
    std::string name = "input" + std::to_string(k);
    if (graph.node(in).kind == NodeKind::Constant) {
      inputs.push_back(single.addConstant(name, graph.constant(in)));
    } else {
      inputs.push_back(single.addInput(name, graph.node(in).type));
      feeds[name] = valueOf(in);
    }
  }
  single.markOutput(single.addOp(n.op, inputs, n.attrs, n.name));
  return graph::interpretGraph(single, feeds)[0];
}

}  // namespace

std::vector<runtime::Tensor> runWithVta(const Graph& graph, const std::map<std::string, runtime::Tensor>& inputs,
                                        CommandStream& stream, const TilingChoice& tilingOf, std::vector<VtaGroupRun>* runs) {
  std::vector<std::optional<runtime::Tensor>> values(graph.nodes().size());
  auto valueOf = [&](int id) -> runtime::Tensor {
    if (graph.node(id).kind == NodeKind::Constant) return graph.constant(id);
    TESSEL_CHECK(values[size_t(id)].has_value(), "node '{}' is read before it was computed", graph.node(id).name);
    return *values[size_t(id)];
  };
  for (int id : graph.inputIds()) {
    const Node& n = graph.node(id);
    auto it = inputs.find(n.name);
    TESSEL_CHECK(it != inputs.end(), "the network needs input '{}'", n.name);
    TESSEL_CHECK(it->second.dtype() == n.type.dtype && it->second.shape() == n.type.shape, "input '{}': expected {}, got {} {}",
                 n.name, n.type.str(), it->second.dtype().str(), runtime::formatShape(it->second.shape()));
    values[size_t(id)] = it->second;
  }
  for (const graph::FusedGroup& group : graph::fuseOperators(graph)) {
    bool dense = packedConvolutionOf(graph, group, "dense_blocked") >= 0;
    if (!dense && packedConvolutionOf(graph, group) < 0) {
      for (int id : group.nodes) values[size_t(id)] = interpretNode(graph, id, valueOf);
      continue;
    }
    try {
      uint64_t gemmsBefore = stream.device().stats().gemmCounter;
      Conv2dWorkload workload;
      Conv2dTiling tiling;
      if (dense) {
        // A packed dense (dense_packed) with its rule-based tiling; its profile row shows the
        // batch blocks per tile as rows.
        PackedConvolution gemm = describePackedConvolution(graph, group, "dense_blocked");
        DenseWorkload w = DenseWorkload::of(graph, gemm.convolution);
        DenseTiling t = defaultDenseTiling(w, gemm, stream.device().config());
        values[size_t(group.output)] = runDenseGroup(stream, graph, group, gemm, t, valueOf);
        tiling = {t.batchBlocks, 1, t.inputBlocks, t.outputBlocks, t.loadBufferSets, t.accumulatorSets};
      } else {
        PackedConvolution conv = describePackedConvolution(graph, group);
        workload = Conv2dWorkload::of(graph, conv.convolution);
        tiling = tilingOf ? tilingOf(workload, conv) : defaultConv2dTiling(workload, conv, stream.device().config());
        values[size_t(group.output)] = runConv2dGroup(stream, graph, group, conv, tiling, valueOf);
      }
      if (runs)
        runs->push_back({graph.node(group.output).name, workload, tiling, stream.device().lastRunCycles(),
                         stream.device().stats().gemmCounter - gemmsBefore, stream.device().lastRunProfile()});
    } catch (const Error& e) {
      throw e.withContext("VTA: the group of node '" + graph.node(group.output).name + "'");
    }
  }
  std::vector<runtime::Tensor> outputs;
  for (int o : graph.outputs()) outputs.push_back(valueOf(o));
  return outputs;
}

}  // namespace tessel::vta
