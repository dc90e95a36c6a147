/// The network graph IR: a dataflow graph of operator nodes. Each node produces one typed
/// tensor; inputs are graph inputs (fed at run time), constants (parameters, held by the
/// graph) or other nodes. Nodes are kept in topological order: a node's inputs always come
/// before it, so one forward walk visits producers first. Adding an operator node infers its
/// type through the registry, so an ill-typed graph cannot be built: the error names the node.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/OpRegistry.h"
#include "runtime/Tensor.h"

namespace tessel::graph {

struct TensorType {
  std::vector<int64_t> shape;
  DataType dtype = DataType::float32();
  bool operator==(const TensorType&) const = default;
  /// "float32[1, 3, 224, 224]"
  std::string str() const;
};

enum class NodeKind { Input, Constant, Op };

struct Node {
  NodeKind kind = NodeKind::Op;
  std::string name;         ///< unique in the graph
  std::string op;           ///< the operator (kind Op)
  std::vector<int> inputs;  ///< ids of the producing nodes
  Attrs attrs = Attrs::object();
  TensorType type;
};

class Graph {
 public:
  /// A graph input fed at run time.
  int addInput(const std::string& name, TensorType type);
  /// A parameter; the graph holds its value.
  int addConstant(const std::string& name, runtime::Tensor value);
  /// A constant fixed by the network's definition (an attention scale, a causal mask, position
  /// indices), not a learned weight: params files neither hold nor need it (GraphParams.h).
  int addFixedConstant(const std::string& name, runtime::Tensor value);
  /// Whether constant `name` is a learned parameter (addConstant), not a fixed one.
  bool isLearned(const std::string& name) const { return !fixed_.count(name); }
  /// An operator node; its type is inferred. `name` defaults to "<op>_<n>". Throws Error naming
  /// the node and the operator when the inputs or attributes are invalid.
  int addOp(const std::string& op, const std::vector<int>& inputs, Attrs attrs = Attrs::object(), std::string name = "");
  void markOutput(int id);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int id) const;
  int findNode(const std::string& name) const;  ///< -1 if absent
  const std::vector<int>& outputs() const { return outputs_; }
  std::vector<int> inputIds() const;
  const runtime::Tensor& constant(int id) const;
  /// Replaces the value of constant `id` (loading weights). Its type must stay the node's:
  /// Error naming the node, the expected and the given type otherwise.
  void setConstant(int id, runtime::Tensor value);
  /// Every constant's value by node name.
  const std::map<std::string, runtime::Tensor>& params() const { return params_; }
  /// Ids of the nodes that read node `id`, in order.
  std::vector<std::vector<int>> consumers() const;
  /// Per node id, whether it is one of the graph's outputs.
  std::vector<bool> outputFlags() const;

  /// One line per node, as `%name = op(%a, %b) {attrs} : type`.
  std::string toString() const;

 private:
  std::string uniqueName(const std::string& base);
  int append(Node node);

  std::vector<Node> nodes_;
  std::vector<int> outputs_;
  std::map<std::string, int> byName_;
  std::map<std::string, runtime::Tensor> params_;
  std::set<std::string> fixed_;  ///< constants of addFixedConstant
  std::map<std::string, int> nameCounters_;
};

/// The output type of `op` applied to inputs of the given types (what addOp infers).
TensorType inferType(const std::string& op, const std::vector<TensorType>& inputs, const Attrs& attrs);

}  // namespace tessel::graph
