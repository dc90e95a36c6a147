#include <algorithm>
#include <set>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {


/// Operators with a layout attribute that run in either layout.
const std::set<std::string> kLayoutOps{"conv2d",           "depthwise_conv2d",  "max_pool2d",          "avg_pool2d",
                                       "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d", "resize2d"};
const std::set<std::string> kBroadcastBinary{"add", "subtract", "multiply", "divide", "maximum", "minimum"};

/// Every old value may exist in the new graph in its own layout (`original`), transposed to
/// the desired layout (`converted`), or both; each is made at most once, when first needed.
class LayoutConverter {
 public:
  LayoutConverter(const Graph& graph, ops::Layout from, ops::Layout to)
      : graph_(graph), rw_(graph), from_(from), to_(to), original_(graph.nodes().size(), -1),
        converted_(graph.nodes().size(), -1) {
    toTarget_ = to == ops::Layout::NHWC ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 3, 1, 2};
    toSource_ = to == ops::Layout::NHWC ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{0, 2, 3, 1};
    // conv2d OIHW <-> HWIO.
    convWeight_ = to == ops::Layout::NHWC ? std::vector<int>{2, 3, 1, 0} : std::vector<int>{3, 2, 0, 1};
  }

  Graph run() {
    for (size_t i = 0; i < graph_.nodes().size(); ++i)
      if (graph_.nodes()[i].kind == NodeKind::Op) convert(int(i));
    for (int o : graph_.outputs()) rw_.setMapping(o, original(o));
    return rw_.finish();
  }

 private:
  bool isConverted(int id) const { return converted_[size_t(id)] >= 0 && original_[size_t(id)] < 0; }
  int rank(int id) const { return int(graph_.node(id).type.shape.size()); }

  int transpose(int newId, const std::vector<int>& axes, const std::string& name) {
    return rw_.graph().addOp("transpose", {newId}, {{"axes", axes}}, rw_.freshName(name));
  }
  /// Old value `id` in its own layout.
  int original(int id) {
    int& o = original_[size_t(id)];
    if (o < 0)
      o = converted_[size_t(id)] >= 0 ? transpose(converted_[size_t(id)], toSource_, suffixed(id, from_)) : rw_.mapped(id);
    return o;
  }
  std::string suffixed(int id, ops::Layout layout) const {
    return graph_.node(id).name + (layout == ops::Layout::NHWC ? "_nhwc" : "_nchw");
  }
  /// Old rank-4 value `id` in the desired layout.
  int converted(int id) {
    int& h = converted_[size_t(id)];
    if (h < 0) h = transpose(original(id), toTarget_, suffixed(id, to_));
    return h;
  }
  /// An operand of a broadcast op whose result changes layout: rank-4 values transpose, lower
  /// ranks first gain leading unit axes (broadcasting commutes with the transpose then).
  int broadcastOperandConverted(int id) {
    int r = rank(id);
    if (r == 4) return converted(id);
    if (r == 0) return original(id);
    std::vector<int64_t> shape(size_t(4 - r), 1);
    for (int64_t d : graph_.node(id).type.shape) shape.push_back(d);
    const std::string& name = graph_.node(id).name;
    int expanded = rw_.graph().addOp("reshape", {original(id)}, {{"shape", shape}}, rw_.freshName(name + "_4d"));
    return transpose(expanded, toTarget_, suffixed(id, to_));
  }

  void emitOriginal(int id, std::vector<int> inputs, Attrs attrs) {
    const Node& n = graph_.node(id);
    original_[size_t(id)] = rw_.graph().addOp(n.op, inputs, std::move(attrs), n.name);
  }
  void emitConverted(int id, std::vector<int> inputs, Attrs attrs) {
    const Node& n = graph_.node(id);
    converted_[size_t(id)] = rw_.graph().addOp(n.op, inputs, std::move(attrs), n.name);
  }
  std::vector<int> originalInputs(int id) {
    std::vector<int> ids;
    for (int in : graph_.node(id).inputs) ids.push_back(original(in));
    return ids;
  }

  static int channelAxis(const Attrs& attrs, const char* key, int fallback, int rank) {
    int axis = attrs.value(key, fallback);
    return axis < 0 ? axis + rank : axis;
  }

  void convert(int id) {
    const Node& n = graph_.node(id);
    const std::vector<int>& in = n.inputs;
    bool anyConverted = false;
    for (int i : in) anyConverted = anyConverted || isConverted(i);
    int r = int(n.type.shape.size());
    const std::string fromName = ops::layoutName(from_);
    int fromChannel = from_ == ops::Layout::NCHW ? 1 : 3, toChannel = to_ == ops::Layout::NCHW ? 1 : 3;

    if (kLayoutOps.count(n.op) && n.attrs.value("layout", std::string("NCHW")) == fromName && r == 4) {
      Attrs attrs = n.attrs;
      attrs["layout"] = ops::layoutName(to_);
      std::vector<int> inputs{converted(in[0])};
      if (n.op == "conv2d" || n.op == "depthwise_conv2d") {
        // Depthwise [C, M, KH, KW] <-> [KH, KW, C, M] is its own inverse.
        std::vector<int> axes = n.op == "conv2d" ? convWeight_ : std::vector<int>{2, 3, 0, 1};
        inputs.push_back(transpose(original(in[1]), axes, graph_.node(in[1]).name + "_" + ops::layoutName(to_)));
      }
      return emitConverted(id, inputs, attrs);
    }
    if (anyConverted && r == 4) {
      const OpDef& def = lookupOp(n.op);
      if (def.pattern == OpPattern::ElemWise && in.size() == 1) return emitConverted(id, {converted(in[0])}, n.attrs);
      if ((n.op == "batch_norm" || n.op == "bias_add") && isConverted(in[0]) &&
          channelAxis(n.attrs, "axis", 1, r) == fromChannel) {
        Attrs attrs = n.attrs;
        attrs["axis"] = toChannel;
        std::vector<int> inputs{converted(in[0])};
        for (size_t k = 1; k < in.size(); ++k) inputs.push_back(original(in[k]));
        return emitConverted(id, inputs, attrs);
      }
      if (kBroadcastBinary.count(n.op)) {
        std::vector<int> inputs;
        for (int i : in) inputs.push_back(broadcastOperandConverted(i));
        return emitConverted(id, inputs, n.attrs);
      }
      if (n.op == "concatenate") {
        int axis = channelAxis(n.attrs, "axis", 1, r);
        std::vector<int> inputs;
        for (int i : in) inputs.push_back(converted(i));
        Attrs attrs = n.attrs;
        attrs["axis"] = std::find(toTarget_.begin(), toTarget_.end(), axis) - toTarget_.begin();
        return emitConverted(id, inputs, attrs);
      }
      if (n.op == "softmax") {
        Attrs attrs = n.attrs;
        int axis = channelAxis(n.attrs, "axis", -1, r);
        attrs["axis"] = std::find(toTarget_.begin(), toTarget_.end(), axis) - toTarget_.begin();
        return emitConverted(id, {converted(in[0])}, attrs);
      }
      if (n.op == "pad") {
        Attrs attrs = n.attrs;
        for (const char* key : {"before", "after"}) {
          auto widths = n.attrs.value(key, std::vector<int64_t>(4, 0));
          if (widths.size() != 4) continue;
          std::vector<int64_t> permuted;
          for (int a : toTarget_) permuted.push_back(widths[size_t(a)]);
          attrs[key] = permuted;
        }
        return emitConverted(id, {converted(in[0])}, attrs);
      }
    }
    // With unit height and width both layouts hold the same elements in the same order, so
    // flattening or reshaping pooled features needs no transpose.
    if ((n.op == "flatten" || n.op == "reshape") && isConverted(in[0])) {
      const auto& s = graph_.node(in[0]).type.shape;
      int h = from_ == ops::Layout::NCHW ? 2 : 1;
      if (s[size_t(h)] == 1 && s[size_t(h) + 1] == 1) return emitOriginal(id, {converted(in[0])}, n.attrs);
    }
    emitOriginal(id, originalInputs(id), n.attrs);
  }

  const Graph& graph_;
  GraphRewriter rw_;
  ops::Layout from_, to_;
  std::vector<int> original_, converted_;
  std::vector<int> toTarget_, toSource_, convWeight_;
};

}  // namespace

Graph convertLayout(const Graph& graph, ops::Layout desired) {
  ops::Layout from = desired == ops::Layout::NHWC ? ops::Layout::NCHW : ops::Layout::NHWC;
  return LayoutConverter(graph, from, desired).run();
}

}  // namespace tessel::graph
