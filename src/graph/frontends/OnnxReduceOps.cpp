// Converters of ONNX's reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin) onto the graph's
// sum, mean, max and min. The axes are an attribute until the version that made them an input
// (ReduceSum's 13, the others' 18), from which an empty list with noop_with_empty_axes leaves
// the input as it is. The mean or the max of a 4-D image over its two spatial axes, kept, is the
// graph's global pooling: the operator the layout pass and the pooling schedules know (what
// PyTorch's default exporter writes for adaptive_avg_pool2d(1)).
#include <fmt/format.h>

#include <algorithm>

#include "graph/frontends/OnnxFolding.h"
#include "graph/frontends/OnnxImporter.h"
#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

Converter reduction(const std::string& op, int64_t axesInputOpset) {
  return [op, axesInputOpset](Importer& im, const NodeView& node) -> std::vector<Value> {
    const auto& shape = im.inputType(node, 0).shape;
    const int64_t rank = int64_t(shape.size());
    std::vector<int64_t> given;
    bool noopWhenEmpty = false;
    if (node.opset() < axesInputOpset) {
      given = node.getInts("axes", {});
    } else {
      if (node.hasInput(1)) given = intValues(im.constantInput(node, 1, "axes"), node.label() + ": axes");
      noopWhenEmpty = node.getInt("noop_with_empty_axes", 0) != 0;
    }
    bool keepdims = node.getInt("keepdims", 1) != 0;
    if (given.empty() && noopWhenEmpty) return {im.input(node, 0)};
    std::vector<int> axes;
    for (int64_t a : given) {
      if (a < -rank || a >= rank) node.error(fmt::format("axis {} is out of range for rank {}", a, rank));
      int axis = int(a < 0 ? a + rank : a);
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) node.error(fmt::format("axis {} is listed twice", a));
      axes.push_back(axis);
    }
    std::vector<int> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (rank == 4 && keepdims && sorted == std::vector<int>{2, 3} && (op == "mean" || op == "max"))
      return {im.fromNode(im.addOp(node, op == "mean" ? "global_avg_pool2d" : "global_max_pool2d", {im.inputNode(node, 0)},
                                   {{"layout", "NCHW"}}))};
    return {im.fromNode(im.addOp(node, op, {im.inputNode(node, 0)}, {{"axis", axes}, {"keepdims", keepdims}}))};
  };
}

}  // namespace

void addReduceConverters(ConverterTable& t) {
  t["ReduceSum"] = reduction("sum", 13);
  t["ReduceMean"] = reduction("mean", 18);
  t["ReduceMax"] = reduction("max", 18);
  t["ReduceMin"] = reduction("min", 18);
}

}  // namespace tessel::graph::onnx_import
