// combine_parallel_products: matrix products that read the same value with constant weights of
// the same reduction (a transformer's query, key and value projections) become one product with
// the weights side by side, and slices of it. One wide product keeps a GPU's multiprocessors
// busier than three narrow ones (each of BERT-base's 128 x 768 projections fills 2.9 warps per
// multiprocessor of an H200) and reads the shared operand once. TVM has the same rewrite for
// dense layers (CombineParallelDense).
#include <fmt/format.h>

#include <cstring>
#include <map>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"

namespace tessel::graph {

namespace {

/// A product of `operand` by a constant [K, N] float32 weight, and the add of a constant [N]
/// bias that is its only reader, if there is one.
struct Branch {
  int product = -1, bias = -1, add = -1;  ///< old node ids (-1: no bias)
  int64_t columns = 0;
};

bool isFloat32(const TensorType& t) { return t.dtype == DataType::float32(); }

std::optional<Branch> branchOf(const Graph& g, int id, int operand, const std::vector<std::vector<int>>& readers,
                               const std::vector<bool>& isOutput) {
  const Node& n = g.node(id);
  if (n.kind != NodeKind::Op || (n.op != "matmul" && n.op != "batch_matmul") || n.inputs.size() != 2 || n.inputs[0] != operand ||
      !n.attrs.empty())
    return std::nullopt;
  const Node& w = g.node(n.inputs[1]);
  if (!constantValue(g, n.inputs[1]) || w.type.shape.size() != 2 || !isFloat32(w.type) || !isFloat32(n.type)) return std::nullopt;
  Branch b;
  b.product = id;
  b.columns = w.type.shape[1];
  // A bias add joins the branch when it is the product's only reader.
  if (readers[size_t(id)].size() == 1 && !isOutput[size_t(id)]) {
    int add = readers[size_t(id)][0];
    const Node& a = g.node(add);
    if (a.op == "add" && a.inputs.size() == 2 && a.type.shape == n.type.shape) {
      int other = a.inputs[0] == id ? a.inputs[1] : a.inputs[0];
      const Node& bias = g.node(other);
      if (other != id && constantValue(g, other) && isFloat32(bias.type) && bias.type.shape == std::vector<int64_t>{b.columns}) {
        b.bias = other;
        b.add = add;
      }
    }
  }
  return b;
}

/// The constants side by side along their last axis ([K, N1] ... -> [K, N1 + ...]).
runtime::Tensor sideBySide(const std::vector<const runtime::Tensor*>& parts) {
  std::vector<int64_t> shape = parts[0]->shape();
  int64_t total = 0;
  for (const auto* p : parts) total += p->shape().back();
  shape.back() = total;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  runtime::Tensor out = runtime::Tensor::empty(shape, DataType::float32());
  float* dst = out.dataAs<float>();
  int64_t offset = 0;
  for (const auto* p : parts) {
    int64_t columns = p->shape().back();
    const float* src = p->dataAs<float>();
    for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * total + offset, src + r * columns, size_t(columns) * sizeof(float));
    offset += columns;
  }
  return out;
}

}  // namespace

Graph combineParallelProducts(const Graph& graph) {
  const auto& nodes = graph.nodes();
  std::vector<std::vector<int>> readers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int in : nodes[i].inputs) readers[size_t(in)].push_back(int(i));
  std::vector<bool> isOutput = graph.outputFlags();

  // The groups: per operand, its products by constant weights of one reduction, in order. Only
  // groups whose branches all have a bias, or none has, combine (one add for all of them).
  std::map<int, std::vector<Branch>> groupOf;  // first product -> its group
  for (size_t operand = 0; operand < nodes.size(); ++operand) {
    std::map<std::pair<int64_t, bool>, std::vector<Branch>> byKind;  // (reduction, biased)
    for (int r : readers[operand])
      if (auto b = branchOf(graph, r, int(operand), readers, isOutput))
        byKind[{graph.node(graph.node(r).inputs[1]).type.shape[0], b->bias >= 0}].push_back(*b);
    for (auto& [kind, branches] : byKind) {
      if (branches.size() < 2) continue;
      // One op kind per group (matmul or batch_matmul), read in graph order.
      std::vector<Branch> same;
      for (const auto& b : branches)
        if (graph.node(b.product).op == graph.node(branches[0].product).op) same.push_back(b);
      if (same.size() < 2) continue;
      groupOf[same[0].product] = same;
    }
  }

  GraphRewriter rw(graph);
  std::vector<bool> replaced(nodes.size(), false);  // a branch's product or add, now a slice
  for (size_t i = 0; i < nodes.size(); ++i) {
    int id = int(i);
    const Node& n = nodes[i];
    if (n.kind != NodeKind::Op || replaced[i]) continue;
    auto groupIt = groupOf.find(id);
    if (groupIt == groupOf.end()) {
      rw.copyOp(id);
      continue;
    }
    const std::vector<Branch>& group = groupIt->second;
    std::vector<const runtime::Tensor*> weights, biases;
    for (const auto& b : group) {
      weights.push_back(constantValue(graph, nodes[size_t(b.product)].inputs[1]));
      if (b.bias >= 0) biases.push_back(constantValue(graph, b.bias));
    }
    Graph& g = rw.graph();
    int weight = g.addConstant(rw.freshName(n.name + "_combined_weight"), sideBySide(weights));
    int combined = g.addOp(n.op, {rw.mapped(n.inputs[0]), weight}, Attrs::object(), rw.freshName(n.name + "_combined"));
    if (!biases.empty()) {
      int bias = g.addConstant(rw.freshName(n.name + "_combined_bias"), sideBySide(biases));
      combined = g.addOp("add", {combined, bias}, Attrs::object(), rw.freshName(n.name + "_combined_bias_add"));
    }
    // Each branch's value is its columns of the combined product, under the branch's last name.
    const std::vector<int64_t>& shape = g.node(combined).type.shape;
    int64_t offset = 0;
    for (const auto& b : group) {
      std::vector<int64_t> begin(shape.size(), 0), step(shape.size(), 1), part = shape;
      begin.back() = offset;
      part.back() = b.columns;
      int last = b.add >= 0 ? b.add : b.product;
      int slice = g.addOp("strided_slice", {combined}, Attrs{{"begin", begin}, {"step", step}, {"shape", part}}, nodes[size_t(last)].name);
      rw.setMapping(last, slice);
      replaced[size_t(b.product)] = true;
      if (b.add >= 0) replaced[size_t(b.add)] = true;
      offset += b.columns;
    }
  }
  return rw.finish();
}

}  // namespace tessel::graph
