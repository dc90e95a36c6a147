#include <algorithm>
#include <map>
#include <optional>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

/// Where a weight keeps its output channels: output channel of flat element i is
/// (i / inner) % count.
struct ChannelPlacement {
  int64_t inner = 1, count = 0;
  int outputAxis = 1;  ///< the output channel axis of the operator's result
};

std::optional<ChannelPlacement> placementOf(const Node& n, const runtime::Tensor& weight) {
  const auto& w = weight.shape();
  if (n.op == "dense" && w.size() == 2) return ChannelPlacement{w[1], w[0], int(n.type.shape.size()) - 1};
  if (w.size() != 4 || (n.op != "conv2d" && n.op != "depthwise_conv2d")) return std::nullopt;
  bool nhwc = n.attrs.value("layout", std::string("NCHW")) == "NHWC";
  if (n.op == "conv2d")  // OIHW or HWIO
    return nhwc ? ChannelPlacement{1, w[3], 3} : ChannelPlacement{w[1] * w[2] * w[3], w[0], 1};
  // Depthwise: output channel c * M + m of [C, M, KH, KW] or [KH, KW, C, M].
  return nhwc ? ChannelPlacement{1, w[2] * w[3], 3} : ChannelPlacement{w[2] * w[3], w[0] * w[1], 1};
}

/// The per-channel factors of `scale` when it varies along `axis` of a rank-`rank` result only
/// (numpy broadcasting), or nothing.
std::optional<std::vector<float>> perChannel(const runtime::Tensor& scale, int axis, int rank, int64_t channels) {
  if (scale.dtype() != DataType::float32() || scale.ndim() > rank) return std::nullopt;
  int offset = rank - scale.ndim();
  for (int d = 0; d < scale.ndim(); ++d) {
    int64_t extent = scale.shape()[size_t(d)];
    if (d + offset == axis ? (extent != channels && extent != 1) : extent != 1) return std::nullopt;
  }
  const float* s = scale.dataAs<float>();
  if (scale.numel() == 1) return std::vector<float>(size_t(channels), s[0]);
  return std::vector<float>(s, s + channels);
}

}  // namespace

Graph foldScaleAxis(const Graph& graph) {
  auto consumers = graph.consumers();
  std::vector<bool> isOutput = graph.outputFlags();

  // First decide which multiplies fold, so that their producers are never emitted.
  struct Fold {
    int producer = -1;
    runtime::Tensor weight;  // scaled
  };
  std::map<int, Fold> folds;
  std::vector<bool> absorbed(graph.nodes().size(), false);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    for (int side = 0; n.kind == NodeKind::Op && n.op == "multiply" && side < 2; ++side) {
      int producer = n.inputs[size_t(side)];
      const runtime::Tensor* scale = constantValue(graph, n.inputs[size_t(1 - side)]);
      const Node& p = graph.node(producer);
      if (!scale || p.kind != NodeKind::Op || consumers[size_t(producer)].size() != 1 || isOutput[size_t(producer)] ||
          p.type != n.type || p.type.dtype != DataType::float32())
        continue;
      const runtime::Tensor* weight = p.inputs.size() == 2 ? constantValue(graph, p.inputs[1]) : nullptr;
      if (!weight || weight->dtype() != DataType::float32()) continue;
      auto placement = placementOf(p, *weight);
      if (!placement) continue;
      auto factors = perChannel(*scale, placement->outputAxis, int(n.type.shape.size()), placement->count);
      if (!factors) continue;
      runtime::Tensor scaled = weight->clone();
      float* w = scaled.dataAs<float>();
      // Runs of `inner` elements share a factor (a division per run, not per element).
      const int64_t count = scaled.numel();
      for (int64_t run = 0, e = 0; e < count; ++run) {
        float f = (*factors)[size_t(run % placement->count)];
        for (int64_t end = std::min(count, e + placement->inner); e < end; ++e) w[e] *= f;
      }
      folds[int(i)] = {producer, std::move(scaled)};
      absorbed[size_t(producer)] = true;
      break;
    }
  }

  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    if (n.kind != NodeKind::Op || absorbed[i]) continue;
    auto fold = folds.find(int(i));
    if (fold == folds.end()) {
      rw.copyOp(int(i));
      continue;
    }
    // The producer again, with the scale in its weights, under the multiply's name.
    const Node& p = graph.node(fold->second.producer);
    Graph& out = rw.graph();
    int weightId = out.addConstant(rw.freshName(graph.node(p.inputs[1]).name + "_scaled"), std::move(fold->second.weight));
    rw.setMapping(int(i), out.addOp(p.op, {rw.mapped(p.inputs[0]), weightId}, p.attrs, n.name));
  }
  return rw.finish();
}

}  // namespace tessel::graph
