#include "graph/Graph.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/Error.h"
#include "support/JsonEcho.h"

namespace tessel::graph {

std::string TensorType::str() const { return fmt::format("{}[{}]", dtype.str(), fmt::join(shape, ", ")); }

TensorType inferType(const std::string& op, const std::vector<TensorType>& inputs, const Attrs& attrs) {
  const OpDef& def = lookupOp(op);
  if (inputs.size() < def.minInputs || inputs.size() > def.maxInputs) {
    std::string expected = def.minInputs == def.maxInputs ? fmt::format("{}", def.minInputs)
                                                          : fmt::format("{} to {}", def.minInputs, def.maxInputs);
    fail("operator '{}' takes {} inputs, got {}", op, expected, inputs.size());
  }
  std::vector<te::Tensor> placeholders;
  for (size_t i = 0; i < inputs.size(); ++i)
    placeholders.push_back(te::placeholder(inputs[i].shape, inputs[i].dtype, fmt::format("input{}", i)));
  te::Tensor out = def.compute(placeholders, attrs);
  return {out.shape(), out.dtype()};
}

std::string Graph::uniqueName(const std::string& base) {
  std::string name = base;
  while (byName_.count(name)) name = fmt::format("{}_{}", base, ++nameCounters_[base]);
  return name;
}

int Graph::append(Node node) {
  int id = int(nodes_.size());
  byName_[node.name] = id;
  nodes_.push_back(std::move(node));
  return id;
}

int Graph::addInput(const std::string& name, TensorType type) {
  TESSEL_CHECK(!name.empty() && !byName_.count(name), "graph input '{}': the name is empty or already used", name);
  for (int64_t d : type.shape) TESSEL_CHECK(d > 0, "graph input '{}': invalid shape {}", name, type.str());
  Node n;
  n.kind = NodeKind::Input;
  n.name = name;
  n.type = std::move(type);
  return append(std::move(n));
}

int Graph::addConstant(const std::string& name, runtime::Tensor value) {
  TESSEL_CHECK(!name.empty() && !byName_.count(name), "constant '{}': the name is empty or already used", name);
  TESSEL_CHECK(value.defined(), "constant '{}': the value is undefined", name);
  Node n;
  n.kind = NodeKind::Constant;
  n.name = name;
  n.type = {value.shape(), value.dtype()};
  params_[name] = std::move(value);
  return append(std::move(n));
}

int Graph::addFixedConstant(const std::string& name, runtime::Tensor value) {
  int id = addConstant(name, std::move(value));
  fixed_.insert(name);
  return id;
}

int Graph::addOp(const std::string& op, const std::vector<int>& inputs, Attrs attrs, std::string name) {
  TESSEL_CHECK(attrs.is_object(), "operator '{}': attributes must be a JSON object, got {}", op, attrs.dump());
  name = name.empty() ? uniqueName(op) : name;
  TESSEL_CHECK(!byName_.count(name), "node '{}' ({}): the name is already used", name, op);
  std::vector<TensorType> types;
  for (int i : inputs) {
    TESSEL_CHECK(i >= 0 && i < int(nodes_.size()), "node '{}' ({}): input id {} does not exist", name, op, i);
    types.push_back(nodes_[size_t(i)].type);
  }
  Node n;
  n.kind = NodeKind::Op;
  n.name = name;
  n.op = op;
  n.inputs = inputs;
  n.attrs = std::move(attrs);
  try {
    n.type = inferType(op, types, n.attrs);
  } catch (const Error& e) {
    // The inputs are named up to a few: an ONNX Concat of 5,000 inputs made this one line 95 KB.
    constexpr size_t kInputsNamed = 8;
    std::vector<std::string> described;
    for (size_t i = 0; i < std::min(inputs.size(), kInputsNamed); ++i)
      described.push_back(fmt::format("%{}: {}", nodes_[size_t(inputs[i])].name, types[i].str()));
    if (inputs.size() > kInputsNamed) described.push_back(fmt::format("... {} inputs in all", inputs.size()));
    throw e.withContext(fmt::format("node '{}' ({}({}) {})", name, op, fmt::join(described, ", "), jsonEcho(n.attrs)));
  }
  return append(std::move(n));
}

void Graph::markOutput(int id) {
  TESSEL_CHECK(id >= 0 && id < int(nodes_.size()), "graph output: node id {} does not exist", id);
  outputs_.push_back(id);
}

const Node& Graph::node(int id) const {
  TESSEL_CHECK(id >= 0 && id < int(nodes_.size()), "node id {} does not exist", id);
  return nodes_[size_t(id)];
}

int Graph::findNode(const std::string& name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? -1 : it->second;
}

std::vector<int> Graph::inputIds() const {
  std::vector<int> ids;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::Input) ids.push_back(int(i));
  return ids;
}

const runtime::Tensor& Graph::constant(int id) const {
  const Node& n = node(id);
  TESSEL_CHECK(n.kind == NodeKind::Constant, "node '{}' is not a constant", n.name);
  return params_.at(n.name);
}

void Graph::setConstant(int id, runtime::Tensor value) {
  const Node& n = node(id);
  TESSEL_CHECK(n.kind == NodeKind::Constant, "node '{}' is not a constant", n.name);
  TESSEL_CHECK(value.defined(), "constant '{}': the new value is undefined", n.name);
  TensorType given{value.shape(), value.dtype()};
  TESSEL_CHECK(given == n.type, "constant '{}': expected {}, got {}", n.name, n.type.str(), given.str());
  params_[n.name] = std::move(value);
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> result(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (int in : nodes_[i].inputs) result[size_t(in)].push_back(int(i));
  return result;
}

std::vector<bool> Graph::outputFlags() const {
  std::vector<bool> result(nodes_.size(), false);
  for (int o : outputs_) result[size_t(o)] = true;
  return result;
}

std::string Graph::toString() const {
  std::string out;
  for (const Node& n : nodes_) {
    switch (n.kind) {
      case NodeKind::Input: out += fmt::format("%{} = input : {}\n", n.name, n.type.str()); break;
      case NodeKind::Constant: out += fmt::format("%{} = constant : {}\n", n.name, n.type.str()); break;
      case NodeKind::Op: {
        std::vector<std::string> args;
        for (int i : n.inputs) args.push_back("%" + nodes_[size_t(i)].name);
        std::string attrs = n.attrs.empty() ? "" : " " + n.attrs.dump();
        out += fmt::format("%{} = {}({}){} : {}\n", n.name, n.op, fmt::join(args, ", "), attrs, n.type.str());
        break;
      }
    }
  }
  std::vector<std::string> outs;
  for (int o : outputs_) outs.push_back("%" + nodes_[size_t(o)].name);
  out += fmt::format("return {}\n", fmt::join(outs, ", "));
  return out;
}

}  // namespace tessel::graph
