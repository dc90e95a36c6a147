// Converters of ONNX's elementwise operators: Add, Sub, Mul, Div (numpy broadcasting; folded
// here when both operands are integer constants, as shape arithmetic is), Relu, Sigmoid, Tanh,
// LeakyRelu, HardSigmoid, HardSwish, Clip (bounds as attributes before opset 11, as constant
// inputs from it on), and what transformer exports add: Exp, Sqrt, Erf, Gelu, Pow, IsNaN, IsInf,
// the comparisons, And, Or, Not and Where.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "graph/frontends/OnnxFolding.h"
#include "graph/frontends/OnnxImporter.h"
#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

using Arithmetic = double (*)(double, double);

Converter binary(const std::string& op, Arithmetic fold) {
  return [op, fold](Importer& im, const NodeView& node) -> std::vector<Value> {
    const Value& a = im.input(node, 0);
    const Value& b = im.input(node, 1);
    if (a.type.dtype != b.type.dtype) node.error(fmt::format("operands of types {} and {}", a.type.str(), b.type.str()));
    // Integer constants are shape arithmetic that a later Reshape or Slice needs as values; float
    // constants stay graph operators, which the graph's constant folding evaluates.
    if (a.constant && b.constant && !a.type.dtype.isFloat())
      return {Importer::fromConstant(broadcastArithmetic(*a.constant, *b.constant, fold, node.label()))};
    return {im.fromNode(im.addOp(node, op, {im.inputNode(node, 0), im.inputNode(node, 1)}))};
  };
}

double integerDivide(double a, double b) {
  if (b == 0) fail("integer division by zero in a constant");
  return std::trunc(a / b);
}

/// Pow with one constant float exponent of 2 or 3 (GPT-2's tanh GELU cubes its input): products
/// of the base, which vectorize, rather than a pow call per element; any other exponent is
/// `power`.
std::vector<Value> pow(Importer& im, const NodeView& node) {
  const Value &a = im.input(node, 0), &b = im.input(node, 1);
  if (b.constant && b.type.dtype.isFloat() && a.type.dtype == b.type.dtype && b.type.shape.size() <= a.type.shape.size() &&
      b.constant->numel() == 1) {
    double exponent = numericValues(*b.constant, node.label() + " exponent")[0];
    if (exponent == 2 || exponent == 3) {
      int x = im.inputNode(node, 0);
      int square = im.addOp(node, "multiply", {x, x}, Attrs::object(), exponent == 3 ? "square" : "");
      if (exponent == 2) return {im.fromNode(square)};
      return {im.fromNode(im.addOp(node, "multiply", {square, x}))};
    }
  }
  return binary("power", [](double u, double v) { return std::pow(u, v); })(im, node);
}

Converter unary(const std::string& op) {
  return [op](Importer& im, const NodeView& node) -> std::vector<Value> {
    return {im.fromNode(im.addOp(node, op, {im.inputNode(node, 0)}))};
  };
}

/// Where: the condition and the two choices broadcast together. On integer constants (the shape
/// arithmetic of Expand's target: where(shape == -1, 1, shape)) it is evaluated here.
std::vector<Value> where(Importer& im, const NodeView& node) {
  const Value &c = im.input(node, 0), &a = im.input(node, 1), &b = im.input(node, 2);
  if (c.type.dtype != DataType::boolean()) node.error(fmt::format("the condition is {}, not bool", c.type.str()));
  if (a.type.dtype != b.type.dtype) node.error(fmt::format("the choices are {} and {}", a.type.str(), b.type.str()));
  if (c.constant && a.constant && b.constant && !a.type.dtype.isFloat()) {
    runtime::Tensor condition = converted(*c.constant, a.type.dtype);
    auto whenTrue = broadcastArithmetic(condition, *a.constant, [](double k, double x) { return k != 0 ? x : 0; }, node.label());
    auto whenFalse = broadcastArithmetic(condition, *b.constant, [](double k, double y) { return k != 0 ? 0 : y; }, node.label());
    return {Importer::fromConstant(broadcastArithmetic(whenTrue, whenFalse, [](double x, double y) { return x + y; }, node.label()))};
  }
  return {im.fromNode(im.addOp(node, "where", {im.inputNode(node, 0), im.inputNode(node, 1), im.inputNode(node, 2)}))};
}

/// Not: on a constant evaluated here (shape arithmetic's masks), else the graph's logical_not.
std::vector<Value> logicalNot(Importer& im, const NodeView& node) {
  const Value& x = im.input(node, 0);
  if (x.type.dtype != DataType::boolean()) node.error(fmt::format("the operand is {}, not bool", x.type.str()));
  if (!x.constant) return {im.fromNode(im.addOp(node, "logical_not", {im.inputNode(node, 0)}))};
  std::vector<double> values = numericValues(*x.constant, node.label());
  for (double& v : values) v = v == 0 ? 1 : 0;
  return {Importer::fromConstant(tensorFromValues(x.type.shape, DataType::boolean(), values))};
}

/// Gelu (opset 20): the exact form or, with approximate "tanh", torch's tanh approximation.
std::vector<Value> gelu(Importer& im, const NodeView& node) {
  std::string approximate = node.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") node.unsupported("approximate", fmt::format("'{}' (none and tanh are)", approximate));
  return {im.fromNode(im.addOp(node, "gelu", {im.inputNode(node, 0)}, {{"approximate", approximate}}))};
}

std::vector<Value> leakyRelu(Importer& im, const NodeView& node) {
  return {im.fromNode(im.addOp(node, "leaky_relu", {im.inputNode(node, 0)}, {{"alpha", node.getFloat("alpha", 0.01f)}}))};
}

std::vector<Value> hardSigmoid(Importer& im, const NodeView& node) {
  Attrs attrs = {{"alpha", node.getFloat("alpha", 0.2f)}, {"beta", node.getFloat("beta", 0.5f)}};
  return {im.fromNode(im.addOp(node, "hard_sigmoid", {im.inputNode(node, 0)}, attrs))};
}

std::vector<Value> clip(Importer& im, const NodeView& node) {
  // Without a bound the float range is the bound: clip(x, lowest, max) changes no finite value.
  double lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (node.opset() < 11) {
    lo = node.getFloat("min", float(lo));
    hi = node.getFloat("max", float(hi));
  } else {
    auto bound = [&](size_t i, const char* what, double& out) {
      if (!node.hasInput(i)) return;
      auto v = numericValues(im.constantInput(node, i, what), node.label());
      if (v.size() != 1) node.error(fmt::format("{} must be one value", what));
      out = v[0];
    };
    bound(1, "min", lo);
    bound(2, "max", hi);
  }
  if (!im.inputType(node, 0).dtype.isFloat()) node.error("Clip is supported on float tensors only");
  if (std::isnan(lo) || std::isnan(hi)) node.error("a bound is NaN");
  return {im.fromNode(im.addOp(node, "clip", {im.inputNode(node, 0)}, {{"min", lo}, {"max", hi}}))};
}

}  // namespace

void addElementwiseConverters(ConverterTable& t) {
  t["Add"] = binary("add", [](double a, double b) { return a + b; });
  t["Sub"] = binary("subtract", [](double a, double b) { return a - b; });
  t["Mul"] = binary("multiply", [](double a, double b) { return a * b; });
  t["Div"] = binary("divide", integerDivide);
  t["Relu"] = unary("relu");
  t["Sigmoid"] = unary("sigmoid");
  t["Tanh"] = unary("tanh");
  t["HardSwish"] = unary("hard_swish");
  t["LeakyRelu"] = leakyRelu;
  t["HardSigmoid"] = hardSigmoid;
  t["Clip"] = clip;
  // Transformer exports' math, comparisons and masks: graph operators (constant-only ones are
  // evaluated by the graph's constant folding).
  t["Exp"] = unary("exp");
  t["Sqrt"] = unary("sqrt");
  t["Erf"] = unary("erf");
  t["IsNaN"] = unary("is_nan");
  t["Not"] = logicalNot;
  t["Gelu"] = gelu;
  t["IsInf"] = [](Importer& im, const NodeView& node) -> std::vector<Value> {
    Attrs attrs = {{"detect_positive", node.getInt("detect_positive", 1) != 0}, {"detect_negative", node.getInt("detect_negative", 1) != 0}};
    return {im.fromNode(im.addOp(node, "is_inf", {im.inputNode(node, 0)}, attrs))};
  };
  t["Where"] = where;
  t["Pow"] = pow;
  // Comparisons and logic give bool tensors; on integer or bool constants (shape arithmetic)
  // they are evaluated here.
  for (auto [onnx, op, fold] : std::vector<std::tuple<const char*, const char*, Arithmetic>>{
           {"Equal", "equal", [](double a, double b) { return double(a == b); }},
           {"Less", "less", [](double a, double b) { return double(a < b); }},
           {"LessOrEqual", "less_equal", [](double a, double b) { return double(a <= b); }},
           {"Greater", "greater", [](double a, double b) { return double(a > b); }},
           {"GreaterOrEqual", "greater_equal", [](double a, double b) { return double(a >= b); }},
           {"And", "logical_and", [](double a, double b) { return double(a != 0 && b != 0); }},
           {"Or", "logical_or", [](double a, double b) { return double(a != 0 || b != 0); }}}) {
    std::string name = op;
    Arithmetic f = fold;
    t[onnx] = [name, f](Importer& im, const NodeView& node) -> std::vector<Value> {
      const Value &a = im.input(node, 0), &b = im.input(node, 1);
      if (a.type.dtype != b.type.dtype) node.error(fmt::format("operands of types {} and {}", a.type.str(), b.type.str()));
      if (a.constant && b.constant && !a.type.dtype.isFloat())
        return {Importer::fromConstant(converted(broadcastArithmetic(*a.constant, *b.constant, f, node.label()), DataType::boolean()))};
      return {im.fromNode(im.addOp(node, name, {im.inputNode(node, 0), im.inputNode(node, 1)}))};
    };
  }
}

}  // namespace tessel::graph::onnx_import
