#include "tune/ansor/AnsorZooTasks.h"

#include <fmt/format.h>

#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "support/Error.h"

namespace tessel::ansortest {

namespace {

bool hasTag(const te::ComputeDAG& dag, const std::string& tag) {
  for (auto& op : dag.ops())
    if (op->tag == tag) return true;
  return false;
}

/// The first task of the network whose DAG has an op with `tag` (and a 3x3 kernel for convolutions).
ZooTask firstTaskWith(const std::string& network, const std::string& tag, const std::string& kind, ops::Layout layout, int classes) {
  graph::ModelOptions o;
  o.imageSize = 32;
  o.layout = layout;
  o.classes = classes;
  graph::OptimizeOptions passes;
  passes.desiredLayout = layout;
  passes.fuseSeparable = layout == ops::Layout::NHWC;  // GPU builds (NCHW) keep TVM's fusion
  auto tasks = graph::extractTasks(graph::optimizeGraph(graph::buildModel(network, o), passes));
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!hasTag(tasks[i].dag, tag)) continue;
    // A 3x3 convolution: its weight placeholder has 3 as its first extents (HWIO), or its last (OIHW).
    if (tag == "conv2d_nhwc" || tag == "conv2d_nchw") {
      bool threeByThree = false;
      size_t h = tag == "conv2d_nhwc" ? 0 : 2;
      for (auto& op : tasks[i].dag.ops())
        threeByThree = threeByThree || (op->isPlaceholder() && op->shape.size() == 4 && op->shape[h] == 3 && op->shape[h + 1] == 3);
      if (!threeByThree) continue;
    }
    return {fmt::format("{} ({} task {})", kind, network, i), tasks[i].dag};
  }
  fail("{} has no task with a '{}' op", network, tag);
}

}  // namespace

std::vector<ZooTask> zooTasks(ops::Layout layout, int classes) {
  const bool nhwc = layout == ops::Layout::NHWC;
  return {firstTaskWith("resnet-18", nhwc ? "conv2d_nhwc" : "conv2d_nchw", "conv2d", layout, classes),
          firstTaskWith("mobilenet", nhwc ? "depthwise_conv2d_nhwc" : "depthwise_conv2d_nchw", "depthwise", layout, classes),
          firstTaskWith("resnet-18", "dense", "dense", layout, classes), firstTaskWith("resnet-18", "softmax", "softmax", layout, classes)};
}

}  // namespace tessel::ansortest
