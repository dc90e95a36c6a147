/// The scaffolding every graph pass shares: a pass reads the old graph in topological order and
/// builds a new one, copying, replacing or dropping nodes. The rewriter keeps the map from old
/// node ids to new ones, copies inputs and constants on first use (so what no one reads is
/// never copied) and carries the outputs over at the end. Node names survive, so a rewritten
/// graph still names the layers a user knows.
#pragma once
#include <string>
#include <vector>

#include "graph/Graph.h"

namespace tessel::graph {

class GraphRewriter {
 public:
  explicit GraphRewriter(const Graph& old);

  const Graph& old() const { return old_; }
  Graph& graph() { return out_; }

  /// The new id of old node `id`, copying it (and nothing else) if it is an input or a constant
  /// not seen yet. An operator node must have been mapped already (visit in order).
  int mapped(int id);
  /// The new ids of an old node's inputs.
  std::vector<int> mappedInputs(int id);
  /// Old node `id` becomes new node `newId`.
  void setMapping(int id, int newId) { map_[size_t(id)] = newId; }
  bool isMapped(int id) const { return map_[size_t(id)] >= 0; }

  /// Copies an operator node onto already mapped inputs, keeping its name and attributes.
  int copyOp(int id);
  /// A fresh name in the new graph, derived from `base` (nodes the pass invents).
  std::string freshName(const std::string& base);

  /// Marks the mapped outputs and returns the new graph.
  Graph finish();

 private:
  const Graph& old_;
  Graph out_;
  std::vector<int> map_;
};

/// A copy of `graph` whose operator nodes `marked` (by id) carry attribute `flag` = true: how the
/// passes that steer fusion (fuse_depthwise, fuse_into_reader) say which nodes join whom.
Graph withFlagOn(const Graph& graph, const std::vector<bool>& marked, const std::string& flag);

/// The value of a constant node in the old graph, or nullptr if node `id` is not a constant.
const runtime::Tensor* constantValue(const Graph& graph, int id);

}  // namespace tessel::graph
