// Converter of ONNX's Einsum for the forms exporters emit: one operand (a transpose, sums over
// letters the output drops) or two (a contraction: attention written as einsum, bilinear
// layers). Two operands become the graph's batch_matmul between transposes and reshapes:
// each operand's letters are sorted into batch letters (in both operands and the output),
// free letters (in one operand and the output), contracted letters (in both, not the output)
// and summed letters (in one, not the output, summed away first); A is laid out as
// [batch, free A, contracted] and B as [batch, contracted, free B], each as one 3-D stack, and
// the product [batch, free A, free B] is reshaped and transposed into the output's order.
// Refused, naming the node: three or more operands, '...', a letter repeated within an
// operand (a diagonal), batch letters whose extents differ.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "graph/frontends/OnnxImporter.h"
#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

struct Equation {
  std::vector<std::string> operands;
  std::string output;
};

Equation parseEquation(const NodeView& node, const std::string& text) {
  std::string compact;
  for (char c : text)
    if (c != ' ') compact += c;
  if (compact.find("...") != std::string::npos) node.unsupported("equation", fmt::format("'{}': '...' is not supported", text));
  Equation e;
  size_t arrow = compact.find("->");
  std::string inputs = compact.substr(0, arrow);
  for (size_t start = 0;;) {
    size_t comma = inputs.find(',', start);
    e.operands.push_back(inputs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::map<char, int> uses;
  for (const auto& operand : e.operands)
    for (char c : operand) {
      if (!std::isalpha(static_cast<unsigned char>(c))) node.unsupported("equation", fmt::format("'{}': '{}' is not a letter", text, c));
      if (std::count(operand.begin(), operand.end(), c) > 1)
        node.unsupported("equation", fmt::format("'{}': '{}' repeats within an operand (a diagonal)", text, c));
      ++uses[c];
    }
  if (arrow != std::string::npos) {
    e.output = compact.substr(arrow + 2);
    for (char c : e.output)
      if (!uses.count(c) || std::count(e.output.begin(), e.output.end(), c) > 1)
        node.unsupported("equation", fmt::format("'{}': output letter '{}' is not one of the operands' or repeats", text, c));
  } else {
    for (auto [c, n] : uses)  // implicit output: the letters used once, in alphabetical order
      if (n == 1) e.output += c;
  }
  return e;
}

/// The permutation that orders `letters` as `order` lists them.
std::vector<int64_t> permutation(const std::string& letters, const std::string& order) {
  std::vector<int64_t> axes;
  for (char c : order) axes.push_back(int64_t(letters.find(c)));
  return axes;
}

bool isIdentity(const std::vector<int64_t>& axes) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != int64_t(i)) return false;
  return true;
}

class EinsumBuilder {
 public:
  EinsumBuilder(Importer& im, const NodeView& node) : im_(im), node_(node) {}

  /// Operand `i` summed over the letters `keep` lacks: its node and remaining letters.
  std::pair<int, std::string> summed(size_t i, const std::string& letters, const std::string& keep) {
    int id = im_.inputNode(node_, i);
    std::vector<int> axes;
    std::string rest;
    for (size_t d = 0; d < letters.size(); ++d) {
      if (keep.find(letters[d]) == std::string::npos) axes.push_back(int(d));
      else rest += letters[d];
    }
    if (axes.empty()) return {id, letters};
    return {im_.addOp(node_, "sum", {id}, {{"axis", axes}, {"keepdims", false}}, fmt::format("sum{}", i)), rest};
  }

  /// `id` (of `letters`) laid out as `order`, then reshaped to `shape`.
  int arranged(int id, const std::string& letters, const std::string& order, const std::vector<int64_t>& shape, const std::string& suffix) {
    auto axes = permutation(letters, order);
    if (!isIdentity(axes)) id = im_.addOp(node_, "transpose", {id}, {{"axes", axes}}, suffix + "_t");
    if (im_.graph().node(id).type.shape != shape) id = im_.addOp(node_, "reshape", {id}, {{"shape", shape}}, suffix + "_r");
    return id;
  }

  static int64_t extent(const std::map<char, int64_t>& extents, const std::string& letters) {
    int64_t n = 1;
    for (char c : letters) n *= extents.at(c);
    return n;
  }

 private:
  Importer& im_;
  const NodeView& node_;
};

std::vector<Value> einsum(Importer& im, const NodeView& node) {
  if (!node.has("equation")) node.error("attribute 'equation' is missing");
  const std::string text = node.getString("equation", "");
  Equation e = parseEquation(node, text);
  if (e.operands.size() != node.inputCount())
    node.error(fmt::format("equation '{}' has {} operands, the node {} inputs", text, e.operands.size(), node.inputCount()));
  if (e.operands.size() > 2) node.unsupported("equation", fmt::format("'{}': more than two operands", text));
  std::map<char, int64_t> extents;
  for (size_t i = 0; i < e.operands.size(); ++i) {
    const auto& shape = im.inputType(node, i).shape;
    if (shape.size() != e.operands[i].size())
      node.error(fmt::format("operand {} is {} but the equation gives it {} letters", i, runtime::formatShape(shape), e.operands[i].size()));
    for (size_t d = 0; d < shape.size(); ++d) {
      char c = e.operands[i][d];
      if (extents.count(c) && extents[c] != shape[d])
        node.error(fmt::format("letter '{}' has extents {} and {}", c, extents[c], shape[d]));
      extents[c] = shape[d];
    }
  }
  EinsumBuilder b(im, node);
  std::vector<int64_t> outShape;
  for (char c : e.output) outShape.push_back(extents[c]);
  if (outShape.empty()) outShape.push_back(1);  // a full contraction: one element (the graph has no scalars)
  if (e.operands.size() == 1) {
    auto [id, letters] = b.summed(0, e.operands[0], e.output);
    auto axes = permutation(letters, e.output);
    if (!isIdentity(axes)) id = im.addOp(node, "transpose", {id}, {{"axes", axes}}, "transposed");
    if (im.graph().node(id).type.shape != outShape) id = im.addOp(node, "reshape", {id}, {{"shape", outShape}}, "shaped");
    return {im.fromNode(id)};
  }
  const std::string& la = e.operands[0];
  const std::string& lb = e.operands[1];
  // Summed letters go first; then the classes over what is left.
  std::string keepA, keepB;
  for (char c : la)
    if (e.output.find(c) != std::string::npos || lb.find(c) != std::string::npos) keepA += c;
  for (char c : lb)
    if (e.output.find(c) != std::string::npos || la.find(c) != std::string::npos) keepB += c;
  auto [a, lettersA] = b.summed(0, la, keepA);
  auto [bb, lettersB] = b.summed(1, lb, keepB);
  std::string batch, freeA, freeB, contracted;
  for (char c : lettersA) {
    bool inB = lettersB.find(c) != std::string::npos, inOut = e.output.find(c) != std::string::npos;
    if (inB && inOut) batch += c;
    else if (inB) contracted += c;
    else freeA += c;
  }
  for (char c : lettersB)
    if (lettersA.find(c) == std::string::npos) freeB += c;
  int64_t nb = EinsumBuilder::extent(extents, batch), m = EinsumBuilder::extent(extents, freeA),
          n = EinsumBuilder::extent(extents, freeB), k = EinsumBuilder::extent(extents, contracted);
  int left = b.arranged(a, lettersA, batch + freeA + contracted, {nb, m, k}, "a");
  int right = b.arranged(bb, lettersB, batch + contracted + freeB, {nb, k, n}, "b");
  int product = im.addOp(node, "batch_matmul", {left, right}, Attrs::object(), "product");
  std::string productLetters = batch + freeA + freeB;
  std::vector<int64_t> unfolded;
  for (char c : productLetters) unfolded.push_back(extents[c]);
  if (unfolded.empty()) unfolded.push_back(1);
  int id = product;
  if (im.graph().node(id).type.shape != unfolded) id = im.addOp(node, "reshape", {id}, {{"shape", unfolded}}, "unfolded");
  auto axes = permutation(productLetters, e.output);
  if (!isIdentity(axes)) id = im.addOp(node, "transpose", {id}, {{"axes", axes}}, "ordered");
  if (im.graph().node(id).type.shape != outShape) id = im.addOp(node, "reshape", {id}, {{"shape", outShape}}, "shaped");
  return {im.fromNode(id)};
}

}  // namespace

void addEinsumConverter(ConverterTable& t) { t["Einsum"] = einsum; }

}  // namespace tessel::graph::onnx_import
