/// The state of one ONNX import, shared by the operator converters: the graph being built, the
/// ONNX values (each a graph node, a known constant, or both), and a view of the node being
/// converted that reads its attributes with their types checked and remembers which it read,
/// so that an attribute no converter understood is an error rather than silently ignored.
///
/// Constants are kept as values and become graph constants only when a graph operator reads
/// them: shape arithmetic (Shape -> Gather -> Concat -> Reshape) is folded here, and the
/// shape tensors it produces never reach the graph.
#pragma once
#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/frontends/OnnxExternalData.h"

namespace tessel::graph::onnx_import {

/// One ONNX value: a graph node (id >= 0), a constant, or a constant that a graph operator
/// already reads (both).
struct Value {
  int node = -1;
  std::optional<runtime::Tensor> constant;
  TensorType type;
};

/// The node being converted: its inputs and outputs by position and its attributes.
class NodeView {
 public:
  NodeView(const onnx::NodeProto& proto, int64_t opset);

  const std::string& opType() const { return proto_.op_type(); }
  int64_t opset() const { return opset_; }
  /// "node 'conv1' (Conv)" (the first output's name when the node has none).
  std::string label() const;
  /// A base for the names of the graph nodes this node becomes: its first output's name.
  const std::string& name() const { return proto_.output(0); }

  /// Inputs counted up to the last non-empty one (ONNX leaves optional inputs empty).
  size_t inputCount() const;
  bool hasInput(size_t i) const { return i < inputCount() && !proto_.input(int(i)).empty(); }
  const std::string& input(size_t i) const;
  size_t outputCount() const { return size_t(proto_.output_size()); }
  const std::string& output(size_t i) const { return proto_.output(int(i)); }

  bool has(const std::string& attribute) const;
  int64_t getInt(const std::string& attribute, int64_t fallback) const;
  float getFloat(const std::string& attribute, float fallback) const;
  std::string getString(const std::string& attribute, const std::string& fallback) const;
  std::vector<int64_t> getInts(const std::string& attribute, std::vector<int64_t> fallback = {}) const;
  std::vector<float> getFloats(const std::string& attribute) const;
  const onnx::TensorProto& getTensor(const std::string& attribute) const;
  /// Marks an attribute as understood without reading it (momentum has no meaning in inference).
  void ignore(const std::string& attribute) const;

  /// Error "<label>: attribute '<attribute>' ...: <why>".
  [[noreturn]] void unsupported(const std::string& attribute, const std::string& why) const;
  /// Error "<label>: <message>".
  [[noreturn]] void error(const std::string& message) const;
  /// Error naming the first attribute no converter read.
  void checkAttributesRead() const;

 private:
  const onnx::AttributeProto* find(const std::string& attribute, onnx::AttributeProto::AttributeType type) const;

  const onnx::NodeProto& proto_;
  int64_t opset_;
  mutable std::set<std::string> read_;
};

class Importer {
 public:
  Importer(Graph& graph, ExternalData& external) : graph_(graph), external_(external) {}
  Graph& graph() { return graph_; }
  /// Where the model's tensors kept outside its file are read from.
  ExternalData& externalData() { return external_; }

  /// Defines an ONNX value by name.
  void define(const std::string& name, Value value);
  /// Records that `name` is an output tessel does not produce (a batch norm's running mean,
  /// a max pool's indices): reading it later is an error saying so.
  void markUnsupported(const std::string& name, std::string why);
  bool isDefined(const std::string& name) const { return values_.count(name) > 0; }
  /// The value of input `i` of `node`; an error naming the node when it is undefined.
  const Value& input(const NodeView& node, size_t i);
  const TensorType& inputType(const NodeView& node, size_t i) { return input(node, i).type; }
  /// The graph node of input `i` (a constant becomes a graph constant on first use).
  int inputNode(const NodeView& node, size_t i);
  /// Input `i` as a constant, or an error "<label>: input <what> must be a constant".
  const runtime::Tensor& constantInput(const NodeView& node, size_t i, const std::string& what);
  bool isConstant(const NodeView& node, size_t i) { return input(node, i).constant.has_value(); }

  /// Adds a graph operator for `node`, named after it (`suffix` for intermediate nodes); an
  /// error from type inference names the ONNX node.
  int addOp(const NodeView& node, const std::string& op, const std::vector<int>& inputs, Attrs attrs = Attrs::object(),
            const std::string& suffix = "");
  /// A graph constant for a value computed during import (a transposed weight, a scalar).
  int addConstant(const NodeView& node, const std::string& suffix, runtime::Tensor value);

  static Value fromConstant(runtime::Tensor t);
  Value fromNode(int id) const { return {id, std::nullopt, graph_.node(id).type}; }

 private:
  std::string freshName(const std::string& base);

  Graph& graph_;
  ExternalData& external_;
  std::map<std::string, Value> values_;
  std::map<std::string, std::string> unsupported_;
};

/// A converter turns one ONNX node into values for its outputs (in order; fewer values than
/// outputs mark the rest unsupported).
using Converter = std::function<std::vector<Value>(Importer&, const NodeView&)>;
using ConverterTable = std::map<std::string, Converter>;

/// The converters by ONNX op type, one function per family of operators.
void addNeuralNetworkConverters(ConverterTable& table);
void addElementwiseConverters(ConverterTable& table);
void addTensorConverters(ConverterTable& table);
void addReduceConverters(ConverterTable& table);
void addEinsumConverter(ConverterTable& table);
const ConverterTable& converters();

}  // namespace tessel::graph::onnx_import
