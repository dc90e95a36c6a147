#include <cmath>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

/// A per-channel vector shaped to broadcast along `axis` of a rank-`rank` tensor: [C, 1, ..., 1].
runtime::Tensor alongAxis(const std::vector<float>& values, int axis, int rank) {
  std::vector<int64_t> shape{int64_t(values.size())};
  for (int i = axis + 1; i < rank; ++i) shape.push_back(1);
  auto t = runtime::Tensor::empty(shape, DataType::float32());
  std::copy(values.begin(), values.end(), t.dataAs<float>());
  return t;
}

}  // namespace

Graph simplifyInference(const Graph& graph) {
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    int id = int(i);
    const Node& n = graph.nodes()[i];
    if (n.kind != NodeKind::Op) continue;
    bool constantStatistics = n.op == "batch_norm" && n.type.dtype == DataType::float32();
    for (size_t k = 1; constantStatistics && k < n.inputs.size(); ++k) {
      const runtime::Tensor* t = constantValue(graph, n.inputs[k]);
      constantStatistics = t && t->dtype() == DataType::float32() && t->ndim() == 1;
    }
    if (!constantStatistics) {
      rw.copyOp(id);
      continue;
    }
    int rank = int(n.type.shape.size());
    int axis = n.attrs.value("axis", 1);
    axis = axis < 0 ? axis + rank : axis;
    double epsilon = n.attrs.value("epsilon", 1e-5);
    bool center = n.attrs.value("center", true), scaled = n.attrs.value("scale", true);
    const float* gamma = graph.constant(n.inputs[1]).dataAs<float>();
    const float* beta = graph.constant(n.inputs[2]).dataAs<float>();
    const float* mean = graph.constant(n.inputs[3]).dataAs<float>();
    const float* var = graph.constant(n.inputs[4]).dataAs<float>();
    size_t channels = size_t(n.type.shape[size_t(axis)]);
    std::vector<float> scale(channels), shift(channels);
    for (size_t c = 0; c < channels; ++c) {
      double s = (scaled ? double(gamma[c]) : 1.0) / std::sqrt(double(var[c]) + epsilon);
      scale[c] = float(s);
      shift[c] = float((center ? double(beta[c]) : 0.0) - double(mean[c]) * s);
    }
    Graph& out = rw.graph();
    int x = rw.mapped(n.inputs[0]);
    int scaleId = out.addConstant(rw.freshName(n.name + "_scale"), alongAxis(scale, axis, rank));
    int shiftId = out.addConstant(rw.freshName(n.name + "_shift"), alongAxis(shift, axis, rank));
    int scaledId = out.addOp("multiply", {x, scaleId}, Attrs::object(), rw.freshName(n.name + "_mul"));
    rw.setMapping(id, out.addOp("add", {scaledId, shiftId}, Attrs::object(), n.name));
  }
  return rw.finish();
}

}  // namespace tessel::graph
