// split_reductions: a matrix product with too few output tiles to keep a GPU's multiprocessors
// busy becomes S partial products over slices of its reduction, batched as one, and their sum.
// BERT-base's 128 x 768 products (the attention's output projection, K 768; the feed-forward
// contraction, K 3072) have 24 tiles of 64 x 64 for an H200's 132 multiprocessors: untuned, the
// contraction took 56 us where the expansion of the same work (128 x 3072, 96 tiles) took 40.
// Split in 8, each part is a product of a quarter of the expansion's size with an eighth of the
// reduction, and there are 192 tiles, two per multiprocessor at most (split in 4, one each,
// BERT-base ran 1.36 ms untuned, in 8 1.32; ViT-B/16's in 2 and then 4: 2.59 and 2.31). The sum
// over the parts is one small reduction that takes the product's bias and residual add.
#include <fmt/format.h>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "ops/GpuDenseTiles.h"
#include "support/Error.h"

namespace tessel::graph {

bool reductionSplitCandidate(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::Op || (n.op != "matmul" && n.op != "batch_matmul") || n.inputs.size() != 2 || !n.attrs.empty())
    return false;
  const TensorType& rows = graph.node(n.inputs[0]).type;
  const TensorType& weight = graph.node(n.inputs[1]).type;
  if (rows.dtype != DataType::float32() || weight.dtype != DataType::float32() || n.type.dtype != DataType::float32()) return false;
  if (!constantValue(graph, n.inputs[1]) || weight.shape.size() != 2 || rows.shape.size() < 2) return false;
  for (size_t d = 0; d + 2 < rows.shape.size(); ++d)
    if (rows.shape[d] != 1) return false;  // one stack of rows: the parts become the batch
  return true;
}

SplitChoice gpuReductionSplitChoice(int64_t multiprocessors) {
  return [multiprocessors](const Graph& graph, int id) -> int64_t {
    if (multiprocessors <= 0) return 1;
    const Node& n = graph.node(id);
    const auto& rows = graph.node(n.inputs[0]).type.shape;
    const auto& weight = graph.node(n.inputs[1]).type.shape;
    const int64_t m = rows[rows.size() - 2], k = weight[0], columns = weight[1];
    auto tilesOf = [](int64_t extent) { return (extent + ops::kGpuGemmLargestTileEdge - 1) / ops::kGpuGemmLargestTileEdge; };
    const int64_t tiles = tilesOf(m) * tilesOf(columns);
    if (2 * tiles >= multiprocessors) return 1;
    constexpr int64_t kShortestPart = 128;
    constexpr int64_t kResidentTiles = 2;  // blocks per multiprocessor the default tiles leave room for
    int64_t parts = 1;
    for (int64_t s = 2; s <= 8; s *= 2)
      if (tiles * s <= kResidentTiles * multiprocessors && k % s == 0 && k / s >= kShortestPart) parts = s;
    return parts;
  };
}

Graph splitProductReductions(const Graph& graph, const SplitChoice& partsOf) {
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const int id = int(i);
    const Node& n = graph.node(id);
    if (n.kind != NodeKind::Op) continue;
    const int64_t parts = reductionSplitCandidate(graph, id) ? partsOf(graph, id) : 1;
    if (parts <= 1) {
      rw.copyOp(id);
      continue;
    }
    const Node& weight = graph.node(n.inputs[1]);
    const int64_t k = weight.type.shape[0], columns = weight.type.shape[1];
    TESSEL_CHECK(k % parts == 0, "node '{}': {} parts do not divide its reduction of {}", n.name, parts, k);
    const auto& rowsShape = graph.node(n.inputs[0]).type.shape;
    const int64_t m = rowsShape[rowsShape.size() - 2], slice = k / parts;
    Graph& g = rw.graph();
    // Rows [.., M, K] -> [M, S, K / S] -> [S, M, K / S]: part s reads columns s K / S onward.
    int rows = g.addOp("reshape", {rw.mapped(n.inputs[0])}, {{"shape", {m, parts, slice}}}, rw.freshName(n.name + "_split_rows"));
    rows = g.addOp("transpose", {rows}, {{"axes", {1, 0, 2}}}, rw.freshName(n.name + "_split_rows_t"));
    // The weight [K, N] -> [S, K / S, N]: part s its rows s K / S onward (folded at build time).
    int blocks = g.addOp("reshape", {rw.mapped(n.inputs[1])}, {{"shape", {parts, slice, columns}}}, rw.freshName(weight.name + "_split"));
    int partial = g.addOp("batch_matmul", {rows, blocks}, Attrs::object(), rw.freshName(n.name + "_parts"));
    // The sum of the parts, in the product's shape, under its name.
    bool keepLeading = n.type.shape.size() == 3;
    int sum = g.addOp("sum", {partial}, {{"axis", {0}}, {"keepdims", keepLeading}},
                      n.type.shape.size() <= 3 ? n.name : rw.freshName(n.name + "_sum"));
    if (n.type.shape.size() > 3) sum = g.addOp("reshape", {sum}, {{"shape", n.type.shape}}, n.name);
    rw.setMapping(id, sum);
  }
  return rw.finish();
}

}  // namespace tessel::graph
