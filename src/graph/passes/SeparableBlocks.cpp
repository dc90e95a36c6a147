// fuse_separable_blocks: marks the pointwise convolutions that fusion puts in one function with
// the depthwise convolution before them (graph/Fusion.h reads the mark).
#include "graph/Operators.h"
#include "graph/OpRegistry.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

bool isPointwise(const Graph& graph, const Node& n) {
  if (n.op != "conv2d" && n.op != "conv2d_packed") return false;
  auto a = readConv2dAttrs(n.op, n.attrs);
  const auto& weight = graph.node(n.inputs[1]).type.shape;  // HWIO, or [K / b, KH, KW, C, b]
  return a.layout == ops::Layout::NHWC && a.groups == 1 && a.strides == std::array<int64_t, 2>{1, 1} &&
         a.dilation == std::array<int64_t, 2>{1, 1} && a.padding == std::array<int64_t, 4>{0, 0, 0, 0} && weight.size() >= 4 &&
         weight[weight.size() - 4] == 1 && weight[weight.size() - 3] == 1;
}

/// separableBlock with the graph's consumers computed once by the caller.
bool separableBlockOf(const Graph& graph, int id, const std::vector<std::vector<int>>& consumers) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || n.inputs.size() != 2 || !isPointwise(graph, n)) return false;
  // Back through the depthwise convolution's element-wise epilogue, each step read only here.
  for (int at = n.inputs[0];;) {
    const Node& p = graph.node(at);
    if (p.kind != NodeKind::Op || consumers[size_t(at)].size() != 1) return false;
    if (p.op == "depthwise_conv2d") {
      auto a = readConv2dAttrs(p.op, p.attrs);
      const auto& image = p.type.shape;  // NHWC
      return a.layout == ops::Layout::NHWC && a.strides == std::array<int64_t, 2>{1, 1} && image.size() == 4 && image[1] >= 14 &&
             image[2] >= 14;
    }
    auto pattern = lookupOp(p.op).pattern;
    if (pattern != OpPattern::ElemWise && pattern != OpPattern::Broadcast) return false;
    at = p.inputs[0];
  }
}

}  // namespace

bool separableBlock(const Graph& graph, int id) { return separableBlockOf(graph, id, graph.consumers()); }

Graph fuseSeparableBlocks(const Graph& graph) {
  auto consumers = graph.consumers();
  std::vector<bool> marked(graph.nodes().size(), false);
  for (size_t i = 0; i < graph.nodes().size(); ++i)
    marked[i] = graph.node(int(i)).kind == NodeKind::Op && separableBlockOf(graph, int(i), consumers);
  return withFlagOn(graph, marked, "fuse_depthwise");
}

}  // namespace tessel::graph
