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
ZooTask firstTaskWith(const std::string& network, const std::string& tag, const std::string& kind) {
  graph::ModelOptions o;
  o.imageSize = 32;
  o.layout = ops::Layout::NHWC;
  o.classes = 10;
  auto tasks = graph::extractTasks(graph::optimizeGraph(graph::buildModel(network, o), {}));
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!hasTag(tasks[i].dag, tag)) continue;
    // A 3x3 convolution: its weight placeholder has 3 as its first extent (HWIO).
    if (tag == "conv2d_nhwc") {
      bool threeByThree = false;
      for (auto& op : tasks[i].dag.ops())
        threeByThree = threeByThree || (op->isPlaceholder() && op->shape.size() == 4 && op->shape[0] == 3 && op->shape[1] == 3);
      if (!threeByThree) continue;
    }
    return {fmt::format("{} ({} task {})", kind, network, i), tasks[i].dag};
  }
  fail("{} has no task with a '{}' op", network, tag);
}

}  // namespace

std::vector<ZooTask> zooTasks() {
  return {firstTaskWith("resnet-18", "conv2d_nhwc", "conv2d"), firstTaskWith("mobilenet", "depthwise_conv2d_nhwc", "depthwise"),
          firstTaskWith("resnet-18", "dense", "dense"), firstTaskWith("resnet-18", "softmax", "softmax")};
}

}  // namespace tessel::ansortest
