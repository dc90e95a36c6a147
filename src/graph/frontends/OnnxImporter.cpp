#include "graph/frontends/OnnxImporter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

const char* attributeTypeName(onnx::AttributeProto::AttributeType type) {
  return onnx::AttributeProto::AttributeType_Name(type).c_str();
}

}  // namespace

NodeView::NodeView(const onnx::NodeProto& proto, int64_t opset) : proto_(proto), opset_(opset) {
  TESSEL_CHECK(proto.output_size() > 0 && !proto.output(0).empty(), "node '{}' ({}) has no output", proto.name(),
               proto.op_type());
}

std::string NodeView::label() const {
  return fmt::format("node '{}' ({})", proto_.name().empty() ? proto_.output(0) : proto_.name(), proto_.op_type());
}

size_t NodeView::inputCount() const {
  size_t n = size_t(proto_.input_size());
  while (n > 0 && proto_.input(int(n - 1)).empty()) --n;
  return n;
}

const std::string& NodeView::input(size_t i) const {
  if (i >= size_t(proto_.input_size())) error(fmt::format("has no input {}", i));
  return proto_.input(int(i));
}

bool NodeView::has(const std::string& attribute) const {
  for (const auto& a : proto_.attribute())
    if (a.name() == attribute) return true;
  return false;
}

const onnx::AttributeProto* NodeView::find(const std::string& attribute, onnx::AttributeProto::AttributeType type) const {
  read_.insert(attribute);
  for (const auto& a : proto_.attribute()) {
    if (a.name() != attribute) continue;
    // The structure check (OnnxModel.cpp) saw that the attribute holds its declared type; this
    // checks that the type is the one the operator's schema gives it.
    if (a.type() != type)
      error(fmt::format("attribute '{}' is {}, expected {}", attribute, attributeTypeName(a.type()), attributeTypeName(type)));
    return &a;
  }
  return nullptr;
}

int64_t NodeView::getInt(const std::string& attribute, int64_t fallback) const {
  auto* a = find(attribute, onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}

float NodeView::getFloat(const std::string& attribute, float fallback) const {
  auto* a = find(attribute, onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}

std::string NodeView::getString(const std::string& attribute, const std::string& fallback) const {
  auto* a = find(attribute, onnx::AttributeProto::STRING);
  return a ? a->s() : fallback;
}

std::vector<int64_t> NodeView::getInts(const std::string& attribute, std::vector<int64_t> fallback) const {
  auto* a = find(attribute, onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<float> NodeView::getFloats(const std::string& attribute) const {
  auto* a = find(attribute, onnx::AttributeProto::FLOATS);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}

const onnx::TensorProto& NodeView::getTensor(const std::string& attribute) const {
  auto* a = find(attribute, onnx::AttributeProto::TENSOR);
  if (!a) error(fmt::format("attribute '{}' is missing", attribute));
  return a->t();
}

void NodeView::ignore(const std::string& attribute) const { read_.insert(attribute); }

void NodeView::unsupported(const std::string& attribute, const std::string& why) const {
  fail("{}: attribute '{}' is not supported: {}", label(), attribute, why);
}

void NodeView::error(const std::string& message) const { fail("{}: {}", label(), message); }

void NodeView::checkAttributesRead() const {
  for (const auto& a : proto_.attribute())
    if (!read_.count(a.name())) fail("{}: attribute '{}' is not supported", label(), a.name());
}

void Importer::define(const std::string& name, Value value) { values_[name] = std::move(value); }

void Importer::markUnsupported(const std::string& name, std::string why) {
  if (!name.empty()) unsupported_[name] = std::move(why);
}

const Value& Importer::input(const NodeView& node, size_t i) {
  if (!node.hasInput(i)) node.error(fmt::format("input {} is missing", i));
  const std::string& name = node.input(i);
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  if (auto u = unsupported_.find(name); u != unsupported_.end())
    node.error(fmt::format("reads '{}', which tessel does not compute: {}", name, u->second));
  node.error(fmt::format("input '{}' is not defined before the node (the graph is not in topological order or has a cycle)",
                         name));
}

int Importer::inputNode(const NodeView& node, size_t i) {
  input(node, i);
  Value& v = values_.at(node.input(i));
  // Operators compute on non-empty tensors; an empty one only ever serves shape arithmetic.
  for (int64_t d : v.type.shape)
    if (d == 0) node.error(fmt::format("input '{}' is empty ({}): operators on empty tensors are not supported", node.input(i), v.type.str()));
  if (v.node < 0) v.node = graph_.addConstant(freshName(node.input(i)), *v.constant);
  return v.node;
}

const runtime::Tensor& Importer::constantInput(const NodeView& node, size_t i, const std::string& what) {
  const Value& v = input(node, i);
  if (!v.constant) node.error(fmt::format("input {} ('{}') must be a constant: tessel compiles static graphs", what, node.input(i)));
  return *v.constant;
}

int Importer::addOp(const NodeView& node, const std::string& op, const std::vector<int>& inputs, Attrs attrs,
                    const std::string& suffix) {
  std::string name = freshName(suffix.empty() ? node.name() : node.name() + "/" + suffix);
  try {
    return graph_.addOp(op, inputs, std::move(attrs), name);
  } catch (const Error& e) {
    throw e.withContext(node.label());
  }
}

int Importer::addConstant(const NodeView& node, const std::string& suffix, runtime::Tensor value) {
  return graph_.addConstant(freshName(node.name() + "/" + suffix), std::move(value));
}

Value Importer::fromConstant(runtime::Tensor t) {
  TensorType type{t.shape(), t.dtype()};
  return {-1, std::move(t), std::move(type)};
}

std::string Importer::freshName(const std::string& base) {
  std::string name = base.empty() ? "value" : base;
  for (int n = 1; graph_.findNode(name) >= 0; ++n) name = fmt::format("{}_{}", base, n);
  return name;
}

const ConverterTable& converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    addNeuralNetworkConverters(t);
    addElementwiseConverters(t);
    addTensorConverters(t);
    addReduceConverters(t);
    addEinsumConverter(t);
    return t;
  }();
  return table;
}

}  // namespace tessel::graph::onnx_import
