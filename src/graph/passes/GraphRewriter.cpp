#include "graph/passes/GraphRewriter.h"

#include <fmt/format.h>

#include "support/Error.h"

namespace tessel::graph {

GraphRewriter::GraphRewriter(const Graph& old) : old_(old), map_(old.nodes().size(), -1) {
  // Inputs keep their order even when unused: they are the module's interface.
  for (int id : old.inputIds()) map_[size_t(id)] = out_.addInput(old.node(id).name, old.node(id).type);
}

int GraphRewriter::mapped(int id) {
  int& m = map_.at(size_t(id));
  if (m >= 0) return m;
  const Node& n = old_.node(id);
  TESSEL_CHECK(n.kind == NodeKind::Constant, "graph pass: node '{}' is used before it was rewritten", n.name);
  m = out_.addConstant(n.name, old_.constant(id));
  return m;
}

std::vector<int> GraphRewriter::mappedInputs(int id) {
  std::vector<int> ids;
  for (int in : old_.node(id).inputs) ids.push_back(mapped(in));
  return ids;
}

int GraphRewriter::copyOp(int id) {
  const Node& n = old_.node(id);
  int newId = out_.addOp(n.op, mappedInputs(id), n.attrs, n.name);
  setMapping(id, newId);
  return newId;
}

Graph withFlagOn(const Graph& graph, const std::vector<bool>& marked, const std::string& flag) {
  GraphRewriter rw(graph);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    int id = int(i);
    const Node& n = graph.node(id);
    if (n.kind != NodeKind::Op) continue;
    if (!marked[i]) {
      rw.copyOp(id);
      continue;
    }
    Attrs attrs = n.attrs;
    attrs[flag] = true;
    rw.setMapping(id, rw.graph().addOp(n.op, rw.mappedInputs(id), attrs, n.name));
  }
  return rw.finish();
}

std::string GraphRewriter::freshName(const std::string& base) {
  if (out_.findNode(base) < 0 && old_.findNode(base) < 0) return base;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (out_.findNode(name) < 0 && old_.findNode(name) < 0) return name;
  }
}

Graph GraphRewriter::finish() {
  for (int o : old_.outputs()) out_.markOutput(mapped(o));
  return std::move(out_);
}

const runtime::Tensor* constantValue(const Graph& graph, int id) {
  const Node& n = graph.node(id);
  return n.kind == NodeKind::Constant ? &graph.constant(id) : nullptr;
}

}  // namespace tessel::graph
