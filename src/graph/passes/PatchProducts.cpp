// patch_products: a convolution over patches that do not overlap (its stride equal to its
// kernel, larger than one pixel, no padding: a vision transformer's patch embedding) is a
// matrix product: each patch's pixels are one row of K = C * KH * KW values, the weight is
// [K, O]. As a product it takes the GEMM schedules (tensor cores on a GPU, packed weights on a
// CPU) where the direct convolution's schedules, written for kernels of 1 to 7 pixels with
// overlapping windows, reduce 768 values per output with no tiling of that reduction (ViT-B/16's
// embedding took 0.19 ms of 1.78 on an H200 as a convolution).
#include <array>

#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "ops/Conv2d.h"

namespace tessel::graph {

namespace {

/// A patch convolution's geometry.
struct Patches {
  bool nchw = true;
  int64_t batch = 0, channels = 0, gridH = 0, gridW = 0, kernelH = 0, kernelW = 0, out = 0;
  int64_t count() const { return gridH * gridW; }
  int64_t rowLength() const { return channels * kernelH * kernelW; }
};

std::optional<Patches> patchesOf(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || n.op != "conv2d" || n.inputs.size() != 2 || !constantValue(graph, n.inputs[1])) return std::nullopt;
  ops::Conv2dAttrs a = readConv2dAttrs(n.op, n.attrs);
  const TensorType& x = graph.node(n.inputs[0]).type;
  const TensorType& w = graph.node(n.inputs[1]).type;
  const DataType f32 = DataType::float32();
  if (a.groups != 1 || a.dilation != std::array<int64_t, 2>{1, 1} || a.padding != std::array<int64_t, 4>{0, 0, 0, 0} ||
      x.dtype != f32 || w.dtype != f32 || n.type.dtype != f32 || x.shape.size() != 4 || w.shape.size() != 4)
    return std::nullopt;
  Patches p;
  p.nchw = a.layout == ops::Layout::NCHW;
  p.batch = x.shape[0];
  p.channels = p.nchw ? x.shape[1] : x.shape[3];
  p.kernelH = p.nchw ? w.shape[2] : w.shape[0];
  p.kernelW = p.nchw ? w.shape[3] : w.shape[1];
  p.out = p.nchw ? w.shape[0] : w.shape[3];
  const int64_t height = p.nchw ? x.shape[2] : x.shape[1], width = p.nchw ? x.shape[3] : x.shape[2];
  // Pointwise convolutions (1x1, stride 1) are patches of one pixel: they keep their own schedules.
  if (a.strides[0] != p.kernelH || a.strides[1] != p.kernelW || p.kernelH * p.kernelW == 1) return std::nullopt;
  // A remainder the windows do not reach would need a slice first; no exporter writes one.
  if (height % p.kernelH != 0 || width % p.kernelW != 0) return std::nullopt;
  p.gridH = height / p.kernelH;
  p.gridW = width / p.kernelW;
  return p;
}

/// The constant bias [O] that a bias_add over the channel axis adds to the convolution, when that
/// add is its only reader: it becomes the product's epilogue.
int channelBiasAdd(const Graph& graph, int conv, const Patches& p, const std::vector<std::vector<int>>& consumers,
                   const std::vector<bool>& isOutput) {
  if (consumers[size_t(conv)].size() != 1 || isOutput[size_t(conv)]) return -1;
  int reader = consumers[size_t(conv)][0];
  const Node& r = graph.node(reader);
  if (r.op != "bias_add" || r.inputs.size() != 2 || r.inputs[0] != conv || !constantValue(graph, r.inputs[1])) return -1;
  int axis = int(r.attrs.value("axis", 1));
  if (axis < 0) axis += 4;
  if (axis != (p.nchw ? 1 : 3) || graph.node(r.inputs[1]).type.shape != std::vector<int64_t>{p.out}) return -1;
  return reader;
}

}  // namespace

Graph patchProducts(const Graph& graph) {
  const auto& nodes = graph.nodes();
  auto consumers = graph.consumers();
  std::vector<bool> isOutput = graph.outputFlags();
  std::vector<bool> absorbed(nodes.size(), false);  // a bias add now in the product's epilogue

  GraphRewriter rw(graph);
  Graph& g = rw.graph();
  for (size_t i = 0; i < nodes.size(); ++i) {
    int id = int(i);
    const Node& n = nodes[i];
    if (n.kind != NodeKind::Op || absorbed[i]) continue;
    auto p = patchesOf(graph, id);
    if (!p) {
      rw.setMapping(id, rw.copyOp(id));
      continue;
    }
    auto reshape = [&](int value, std::vector<int64_t> shape, const std::string& name) {
      return g.addOp("reshape", {value}, {{"shape", std::move(shape)}}, rw.freshName(name));
    };
    auto transpose = [&](int value, std::vector<int> axes, const std::string& name) {
      return g.addOp("transpose", {value}, {{"axes", std::move(axes)}}, rw.freshName(name));
    };
    // The rows: each patch's pixels in the weight's order (C, KH, KW for OIHW; KH, KW, C for HWIO).
    int rows = rw.mapped(n.inputs[0]);
    int weight = rw.mapped(n.inputs[1]);
    if (p->nchw) {
      rows = reshape(rows, {p->batch, p->channels, p->gridH, p->kernelH, p->gridW, p->kernelW}, n.name + "_windows");
      rows = transpose(rows, {0, 2, 4, 1, 3, 5}, n.name + "_patch_major");
      // OIHW [O, C, KH, KW] -> [O, K] -> [K, O]; both fold at build time.
      weight = transpose(reshape(weight, {p->out, p->rowLength()}, n.name + "_weight_rows"), {1, 0}, n.name + "_weight_kn");
    } else {
      rows = reshape(rows, {p->batch, p->gridH, p->kernelH, p->gridW, p->kernelW, p->channels}, n.name + "_windows");
      rows = transpose(rows, {0, 1, 3, 2, 4, 5}, n.name + "_patch_major");
      weight = reshape(weight, {p->rowLength(), p->out}, n.name + "_weight_kn");  // HWIO [KH, KW, C, O]
    }
    rows = reshape(rows, {p->batch, p->count(), p->rowLength()}, n.name + "_patches");
    int value = g.addOp("batch_matmul", {rows, weight}, Attrs::object(), rw.freshName(n.name + "_product"));
    int last = id;
    if (int add = channelBiasAdd(graph, id, *p, consumers, isOutput); add >= 0) {
      value = g.addOp("add", {value, rw.mapped(nodes[size_t(add)].inputs[1])}, Attrs::object(), rw.freshName(n.name + "_bias"));
      absorbed[size_t(add)] = true;
      last = add;
    }
    // Back to the convolution's output layout, under the name of the last node it replaces.
    const std::string& lastName = nodes[size_t(last)].name;
    std::vector<int64_t> grid{p->batch, p->gridH, p->gridW, p->out};
    if (p->nchw)
      value = g.addOp("transpose", {reshape(value, grid, n.name + "_grid")}, {{"axes", std::vector<int>{0, 3, 1, 2}}}, lastName);
    else
      value = g.addOp("reshape", {value}, {{"shape", grid}}, lastName);
    rw.setMapping(id, value);
    rw.setMapping(last, value);
  }
  return rw.finish();
}

}  // namespace tessel::graph
